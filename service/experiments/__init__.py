"""Experiment files and suites: reading and checking them (preflight, abort conditions, fault
scope), the uploads stored in the database, and the catalogue the dashboard lists."""
