"""`make bench`: every benchmark, one after the other (never two loads on the labs at once),
each in its own process; their rows are printed as they come and gathered in
bench/results/summary.json with the machine and the commit they were measured on.

    .venv/bin/python -m bench.run_all [--only P1-ceph,P5,...]

The labs are left as the last benchmark needs them: the Swift lab up, the Ceph lab down.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
# One lab at a time under load: the other's idle daemons (Swift's replicators, auditors
# and updaters take half a core) would be noise in the figures of the one measured. P5
# first: it takes the labs down and up itself.
BENCHMARKS = [
    ("P1-s3-wait", "bench.p1_s3_wait", []),  # no lab: a local server (about 7 min)
    ("P6", "bench.p6_service", []),
    ("P5", "bench.p5_lab_startup", []),
    ("lab down swift", None, []),
    ("P1-ceph", "bench.p1_ceph", ["--aa"]),
    ("P1-s3-ceph", "bench.p1_s3", ["--system", "ceph", "--aa"]),
    ("P2-ceph", "bench.p2_cpu", ["--only", "ceph"]),
    ("P3-ceph", "bench.p3_openloop", ["--only", "ceph"]),
    ("P4", "bench.p4_sampling", []),
    ("P7-ceph", "bench.p7_calibration", ["--only", "ceph"]),
    ("P8-ceph", "bench.p8_baseline", ["--only", "ceph"]),
    # P1 and P2 again in the busy condition: both labs, the web service and a worker up
    ("lab up swift", None, []),
    ("services start", None, []),
    ("P1-ceph-busy", "bench.p1_ceph", ["--separate-only"]),
    ("P1-s3-ceph-busy", "bench.p1_s3", ["--system", "ceph"]),
    ("P2-ceph-busy", "bench.p2_cpu", ["--only", "ceph"]),
    ("P1-swift-busy", "bench.p1_swift", []),
    ("P1-s3-swift-busy", "bench.p1_s3", ["--system", "swift"]),
    ("P2-swift-busy", "bench.p2_cpu", ["--only", "swift"]),
    ("services stop", None, []),
    ("lab down ceph", None, []),
    ("P1-swift", "bench.p1_swift", []),
    # 12 pairs: the lab's rates swing 2-4x from run to run; 6 could not decide (2026-12-03)
    ("P1-s3-swift", "bench.p1_s3", ["--system", "swift", "--aa", "--pairs", "12"]),
    ("P2-swift", "bench.p2_cpu", ["--only", "swift"]),
    ("P3-swift", "bench.p3_openloop", ["--only", "swift"]),
    ("P7-swift", "bench.p7_calibration", ["--only", "swift"]),
    ("P8-swift", "bench.p8_baseline", ["--only", "swift"]),
]
FAULTLINE = str(REPO / ".venv" / "bin" / "faultline")
SERVICES = str(REPO / "scripts" / "demo-services")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", help="comma-separated ids (P1-ceph, P2, ...)")
    parser.add_argument("--extra", default="",
                        help="arguments added to each chosen benchmark's own, e.g. "
                        "'--separate-only' (stored with its figures)")
    args = parser.parse_args()
    added = shlex.split(args.extra)
    chosen = set(args.only.split(",")) if args.only else None
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "summary.json"
    started, commit = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), _commit()
    summary = {"started": started, "commit": commit, "machine": _machine(), "benchmarks": {}}
    if chosen is not None and path.exists():
        # --only replaces the benchmarks it runs and keeps the others' figures; each entry
        # names the commit and the time it was measured at
        kept = json.loads(path.read_text())
        summary["benchmarks"] = {name: {"commit": kept.get("commit"),
                                        "started": kept.get("started"), **entry}
                                 for name, entry in kept.get("benchmarks", {}).items()}
    failed, ran = [], set()
    for name, module, extra in BENCHMARKS:
        if module is None:  # a lab or service step
            if chosen is None:
                command = ([SERVICES, name.split()[1]] if name.startswith("services ")
                           else [FAULTLINE, *name.split()])
                subprocess.run(command, cwd=REPO, check=True)
            continue
        # a prefix ("P2") picks the quiet entries; a busy one is asked by its own name, since
        # --only skips the lab and service steps that make its condition
        if chosen is not None and name not in chosen and (
                name.split("-")[0] not in chosen or name.endswith("-busy")):
            continue
        print(f"== {name} ({module})", flush=True)
        ran.add(name)
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            began = time.monotonic()
            done = subprocess.run([sys.executable, "-m", module, "--json", out.name, *extra,
                                   *added], cwd=REPO)
            rows = json.loads(Path(out.name).read_text() or "[]") if done.returncode == 0 \
                else []
        summary["benchmarks"][name] = {"commit": commit, "started": started,
                                       "arguments": [*extra, *added],
                                       "exit": done.returncode, "rows": rows,
                                       "seconds": round(time.monotonic() - began, 1)}
        if done.returncode != 0:
            failed.append(name)
    path.write_text(json.dumps(summary, indent=2))
    print("\n== summary")
    for name, result in summary["benchmarks"].items():
        if chosen is not None and name not in ran:
            continue
        for row in result["rows"]:
            verdict = {True: "met", False: "NOT met", None: "n/a"}[row["met"]]
            ratio = f", ratio {row['ratio']:.3f}" if row.get("ratio") is not None else ""
            value = "n/a" if row["value"] is None else f"{row['value']:,.3f} {row['unit']}"
            print(f"{row['id']:9} {row['what']}: {value}{ratio}; target {row['target']}: "
                  f"{verdict}{' (' + row['gap'] + ')' if row['gap'] else ''}")
        if result["exit"] != 0:
            print(f"{name}: the benchmark itself failed (exit {result['exit']})")
    print(f"written: {path}")
    sys.exit(1 if failed else 0)


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                          capture_output=True, text=True)
    return done.stdout.strip()


def _machine() -> dict:
    return {"cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}


if __name__ == "__main__":
    main()
