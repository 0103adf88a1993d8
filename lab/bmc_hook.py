"""The chassis control of the container labs' simulated BMCs (lab/bmc.py), run by
`ipmi_sim`:

    python -m lab.bmc_hook [LAB] LAB_HOME NODE get power      prints power:0 or power:1
    python -m lab.bmc_hook [LAB] LAB_HOME NODE set power 0|1  cuts or restores its power

LAB: `ceph-reef` (the default: BMCs started before there was a choice) or `swift-current`.

Idempotent (ipmitool retransmits, and ipmi_sim then runs the hook twice): setting the power
a node already has changes nothing. One hook at a time per node (a lock file), so a
retransmitted `set` waits for the first instead of racing it.
"""

from __future__ import annotations

import fcntl
import sys
from pathlib import Path

from . import ceph_reef, swift_current

LABS = {"ceph-reef": ceph_reef, "swift-current": swift_current}


def main(argv: list[str]) -> int:
    lab = LABS[argv.pop(0)] if argv[:1] and argv[0] in LABS else ceph_reef
    if len(argv) < 4 or argv[3] != "power" or argv[2] not in ("get", "set") \
            or (argv[2] == "set" and argv[4:] not in (["0"], ["1"])):
        print(f"usage: bmc_hook [LAB] LAB_HOME NODE get power | set power 0|1 (not {argv})",
              file=sys.stderr)
        return 2
    home, node, verb = Path(argv[0]), argv[1], argv[2]
    lock_file = lab.lab_at(home).run_dir / f"bmc_hook.{node}.lock"
    with open(lock_file, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if verb == "get":
            print(f"power:{int(lab.node_powered(home, node))}")
        else:
            lab.set_node_power(home, node, argv[4] == "1")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
