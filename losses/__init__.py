"""Training losses. This package imports nothing from the rest of the project."""
