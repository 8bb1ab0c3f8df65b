"""Benchmarks of the agent SQL dialect (docs/benchmarks.md). Run them with `make bench`."""
