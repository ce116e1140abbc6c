"""Side-by-side benchmarks of ember against numpy and PyTorch (when importable).

Run from the repository root: `PYTHONPATH=python python -m bench` (or
`python bench/run.py`); see /work/shared/BENCHMARKS.md for the workloads.
"""
