"""P7: how long `faultline calibrate` takes on a lab, with its default workload shape (4 KiB,
read 80 / write 15 / delete 5) and settings (10 s stages after 2 s of warm-up, 1 to 64 in
flight), timed around the whole command as an operator runs it. Target: 3 minutes or less
per cluster and workload. The capacity it found is in the row's detail.

    .venv/bin/python -m bench.p7_calibration [--only ceph|swift] [--json FILE]
"""

from __future__ import annotations

import json
import subprocess
import time

from .labs import NAMES, REPO, cluster
from .results import Row, arguments, report

FAULTLINE = str(REPO / ".venv" / "bin" / "faultline")
TARGET_S = 180.0


def calibrate(kind: str) -> tuple[float, dict]:
    cluster(kind)  # started if it is not up
    began = time.monotonic()
    done = subprocess.run([FAULTLINE, "calibrate", NAMES[kind], "--json"], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - began
    if done.returncode != 0:
        raise RuntimeError(f"faultline calibrate {NAMES[kind]} failed: {done.stderr[-2000:]}")
    return wall, json.loads(done.stdout)


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--only", choices=sorted(NAMES))
    args = parser.parse_args()
    rows = []
    for kind in sorted(NAMES):
        if args.only not in (None, kind):
            continue
        wall, data = calibrate(kind)
        met = wall <= TARGET_S
        rows.append(Row(f"P7-{kind}", f"`faultline calibrate {NAMES[kind]}`, default shape",
                        round(wall, 1), "s", target=f"<= {TARGET_S:g} s", met=met,
                        gap="" if met else "see bench/README.md",
                        detail={"capacity_ops": data["capacity_ops"],
                                # a lower bound when the generator was the limit at the knee
                                "generator_bound": data["generator_bound"],
                                "generator_bound_why": data.get("generator_bound_why"),
                                "knee_in_flight": data["knee_in_flight"],
                                "stages": [(s["in_flight"], s["ops_s"], s["p99_ms"])
                                           for s in data["stages"]],
                                "stop_reason": data["stop_reason"]}))
    report(rows, args.json)


if __name__ == "__main__":
    main()
