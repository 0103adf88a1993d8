"""Faultline's benchmarks: `make bench` (bench/run_all.py). Not unit tests."""
