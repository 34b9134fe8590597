"""Readers of the published benchmark formats (and the project's unified one), the built-in demo
data, and the LightningDataModules of the Aligner and of MIND's trigger calibration."""
