"""Retrieval at inference time: retrievers, methods and metrics."""
