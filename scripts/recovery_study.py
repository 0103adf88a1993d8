"""Run the recovery-settings study on a lab, its settings interleaved (A B C, then C A B, ...)
so that a drift of the machine over the study does not land on one setting, then print
`faultline recovery-study` of its runs. `ceph`: the mClock profiles on the Reef lab
(the suite experiments/suites/recovery-profiles.json runs the same experiments one profile
after the other); `swift`: the object replicators' settings on the current Swift lab
(experiments/suites/swift-replication-settings.json).

    .venv/bin/python scripts/recovery_study.py [ceph|swift] [--trials 2] [--cluster NAME]
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
# the experiments experiments/<prefix><setting>.json, and the lab they run on by default
STUDIES = {
    "ceph": ("ceph-recovery-", ("high-client-ops", "balanced", "high-recovery-ops"),
             "lab-ceph-reef"),
    "swift": ("swift-recovery-", ("concurrency-1", "concurrency-4", "handoffs-first"),
              "lab-swift-current"),
}


def newest_run() -> int:
    with db.session_factory()() as session:
        return session.execute(select(func.coalesce(func.max(Run.id), 0))).scalar()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", nargs="?", choices=sorted(STUDIES), default="ceph")
    parser.add_argument("--trials", type=int, default=2, choices=range(1, 11))
    parser.add_argument("--cluster", default=None)
    args = parser.parse_args(argv)
    prefix, settings, cluster = STUDIES[args.study]
    cluster = args.cluster or cluster
    faultline = str(Path(sys.executable).with_name("faultline"))
    run_ids = []
    for trial in range(args.trials):
        shift = trial % len(settings)
        for setting in settings[shift:] + settings[:shift]:
            before = newest_run()
            experiment = REPO / "experiments" / f"{prefix}{setting}.json"
            print(f"trial {trial + 1}, {setting}", flush=True)
            subprocess.run([faultline, "run", str(experiment), "--cluster", cluster],
                           check=False)
            if newest_run() > before:
                run_ids.append(newest_run())
    print("runs:", " ".join(map(str, run_ids)), flush=True)
    return subprocess.run([faultline, "recovery-study", *map(str, run_ids)],
                          check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
