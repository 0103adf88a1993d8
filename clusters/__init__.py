"""Everything Faultline knows and does on a cluster, in layers, bottom to top (each package
imports only its own modules and those below it; tests/unit/test_tree_structure.py checks):

- the base, in this package: its errors (`exceptions`), where state lives (`paths`), the one
  wait (`polling`), whether a process still runs (`processes`), and the record of a
  setting that decides recovery (`recovery_settings`);
- `access`: what a cluster is (its inventory entry) and how to reach it: SSH, credentials,
  HTTP, its daemons, and the preflight of a run;
- `ceph`, `swift`: each system's admin client, the settings that decide its recovery,
  and what scaling it out adds;
- `faults`: the fault mechanisms and their undoing;
- `safety`: the guard and blast radius, placement, protected clusters, the fault ledger;
- `discovery`: an inventory drafted from a running cluster.

This package imports nothing else of Faultline; everything else builds on it.
"""
