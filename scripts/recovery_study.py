"""Run the recovery-profile study on a lab, its profiles interleaved (A B C, then C A B, ...)
so that a drift of the machine over the study does not land on one profile, then print
`faultline recovery-study` of its runs. The suite experiments/suites/recovery-profiles.json
runs the same experiments one profile after the other.

    .venv/bin/python scripts/recovery_study.py [--trials 2] [--cluster lab-ceph-reef]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from sqlalchemy import func, select

from service.store import db
from service.store.models import Run

REPO = Path(__file__).resolve().parents[1]
PROFILES = ("high-client-ops", "balanced", "high-recovery-ops")


def newest_run() -> int:
    with db.session_factory()() as session:
        return session.execute(select(func.coalesce(func.max(Run.id), 0))).scalar()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2, choices=range(1, 11))
    parser.add_argument("--cluster", default="lab-ceph-reef")
    args = parser.parse_args(argv)
    faultline = str(Path(sys.executable).with_name("faultline"))
    run_ids = []
    for trial in range(args.trials):
        shift = trial % len(PROFILES)
        for profile in PROFILES[shift:] + PROFILES[:shift]:
            before = newest_run()
            experiment = REPO / "experiments" / f"ceph-recovery-{profile}.json"
            print(f"trial {trial + 1}, {profile}", flush=True)
            subprocess.run([faultline, "run", str(experiment), "--cluster", args.cluster],
                           check=False)
            if newest_run() > before:
                run_ids.append(newest_run())
    print("runs:", " ".join(map(str, run_ids)), flush=True)
    return subprocess.run([faultline, "recovery-study", *map(str, run_ids)],
                          check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
