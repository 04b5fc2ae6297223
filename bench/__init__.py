"""Benchmarks of the chain against real anchors: `python -m bench`."""
