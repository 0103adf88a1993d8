"""P5: lab start-up. `faultline lab up ceph` cold (after `lab down --purge`: data removed)
and warm (after `lab down`), `faultline lab up swift` cold; the median of 3 each, timed
around the whole command as an operator runs it. Targets: Ceph cold <= 30 s, warm <= 15 s;
Swift cold <= 10 s. It takes the labs down and leaves them up.

    .venv/bin/python -m bench.p5_lab_startup [--runs 3] [--json FILE]
"""

from __future__ import annotations

import json
import subprocess
import time

from .labs import REPO
from .results import Row, arguments, median, report

FAULTLINE = str(REPO / ".venv" / "bin" / "faultline")
TARGETS = {("ceph", "cold"): 30.0, ("ceph", "warm"): 15.0, ("swift", "cold"): 10.0}
# what the lab itself counts as ready, from its `lab up --json`
READY = {"ceph": "seconds_to_health_ok", "swift": "seconds_to_first_put_get"}


def _faultline(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([FAULTLINE, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, check=True)


def start(system: str, mode: str) -> tuple[float, float, dict]:
    """(seconds for the whole command, the lab's own seconds to ready, its report)."""
    _faultline("lab", "down", system, *(["--purge"] if mode == "cold" else []))
    began = time.monotonic()
    done = _faultline("lab", "up", system, "--json")
    wall = time.monotonic() - began
    info = json.loads(done.stdout)[system]
    if info["mode"] != mode:
        raise RuntimeError(f"expected a {mode} start of the {system} lab, got {info['mode']}")
    return wall, info[READY[system]], info


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for (system, mode), target in TARGETS.items():
        walls, ready = [], []
        for _ in range(args.runs):
            wall, seconds, _info = start(system, mode)
            walls.append(round(wall, 1))
            ready.append(seconds)
            print(f"{system} {mode}: {wall:.1f} s (the lab's own count: {seconds} s)",
                  flush=True)
        value = median(walls)
        met = value <= target
        rows.append(Row("P5", f"`faultline lab up {system}`, {mode}, median of {args.runs}",
                        value, "s", target=f"<= {target:g} s", met=met,
                        gap="" if met else "see bench/README.md",
                        detail={"runs_s": walls, "lab_ready_s": ready}))
    report(rows, args.json)


if __name__ == "__main__":
    main()
