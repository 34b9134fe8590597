"""Evaluation: configs and the method factory, the resumable runner, metrics, reports and comparisons."""
