"""Ceph's admin client (`ceph` over the mon), its OSD map, and scaling out by one OSD."""
