"""What a cluster is and how to reach it: inventory, SSH, admin clients.

This package imports nothing else of Faultline; everything else builds on it.
"""
