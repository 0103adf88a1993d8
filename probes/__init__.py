"""Chaos Toolkit probes: health, redundancy, recovery progress."""
