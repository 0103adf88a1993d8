"""What keeps a fault from harming a cluster: the guard and its blast radius, placement,
protected clusters, and the fault ledger that every restore reads."""
