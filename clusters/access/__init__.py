"""How a cluster is reached: its inventory entry, SSH to its nodes, its credentials, HTTP, and
its daemons (signalled, started, inspected)."""
