"""P5: lab start-up. `faultline lab up ceph` cold (after `lab down --purge`: data removed)
and warm (after `lab down`), `faultline lab up swift` cold, and the container labs of the
current releases (systemd in nspawn containers: Ceph 18 `--release reef`, Swift 2.35
`--release current`) cold and warm, their root filesystems already built (a one-off, not
counted: `lab up` reports it apart, as rootfs_build_s); the median of 3 each, timed around
the whole command as an operator runs it. Targets: Ceph cold <= 30 s, warm <= 15 s (both
releases); Swift 2.30 cold <= 10 s; Swift 2.35 cold <= 30 s, warm <= 15 s. It takes the labs
down and leaves them up.

    .venv/bin/python -m bench.p5_lab_startup [--runs 3] [--release pacific|reef|current]
        [--json FILE]
"""

from __future__ import annotations

import json
import subprocess
import time

from .labs import REPO
from .results import Row, arguments, median, report

FAULTLINE = str(REPO / ".venv" / "bin" / "faultline")
TARGETS = {("ceph", "pacific", "cold"): 30.0, ("ceph", "pacific", "warm"): 15.0,
           ("swift", "pacific", "cold"): 10.0,
           ("ceph", "reef", "cold"): 30.0, ("ceph", "reef", "warm"): 15.0,
           ("swift", "current", "cold"): 30.0, ("swift", "current", "warm"): 15.0}
# what the lab itself counts as ready, from its `lab up --json`
READY = {"ceph": "seconds_to_health_ok", "swift": "seconds_to_first_put_get"}


def _faultline(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([FAULTLINE, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, check=True)


def start(system: str, release: str, mode: str) -> tuple[float, float, dict]:
    """(seconds for the whole command, the lab's own seconds to ready, its report)."""
    which = (system, "--release", release)
    _faultline("lab", "down", *which, *(["--purge"] if mode == "cold" else []))
    began = time.monotonic()
    done = _faultline("lab", "up", *which, "--json")
    wall = time.monotonic() - began
    info = json.loads(done.stdout)[system]
    if info["mode"] != mode:
        raise RuntimeError(f"expected a {mode} start of the {system} lab, got {info['mode']}")
    return wall, info[READY[system]], info


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--release", choices=("pacific", "reef", "current"), default=None,
                        help="only this release's labs (default: both)")
    args = parser.parse_args()
    rows = []
    for (system, release, mode), target in TARGETS.items():
        if args.release not in (None, release):
            continue
        walls, ready = [], []
        for _ in range(args.runs):
            wall, seconds, _info = start(system, release, mode)
            walls.append(round(wall, 1))
            ready.append(seconds)
            print(f"{system} {release} {mode}: {wall:.1f} s (the lab's own count: {seconds} s)",
                  flush=True)
        value = median(walls)
        met = value <= target
        rows.append(Row("P5", f"`faultline lab up {system} --release {release}`, {mode}, "
                              f"median of {args.runs}",
                        value, "s", target=f"<= {target:g} s", met=met,
                        gap="" if met else "see bench/README.md",
                        detail={"runs_s": walls, "lab_ready_s": ready}))
    report(rows, args.json)


if __name__ == "__main__":
    main()
