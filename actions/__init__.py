"""Chaos Toolkit actions: faults and the restore of each."""
