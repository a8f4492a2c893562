"""Benchmarks (not tests): ``python -m bench``; see BENCHMARKS.md."""
