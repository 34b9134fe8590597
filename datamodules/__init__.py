"""Data: types, loaders for the benchmark formats, the built-in demo data."""
