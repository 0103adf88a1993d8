"""`make examples`: the README's worked examples, each experiment run once on the lab as an
operator runs it (`faultline run FILE --cluster NAME`), its report stored in
docs/examples/NAME.json (the report's JSON, with the command, the commit, the date, the
machine's load average and its exit status) and NAME.txt (the report as printed). Every
figure the README quotes from a single run has one of these files behind it.

    .venv/bin/python scripts/worked_examples.py [--only NAME,...] [--list]

The labs it needs are started if they are not up and left up (`make lab-down` stops them).
The Pacific examples run with both Pacific labs up, as the catalogue's experiments are run;
the Reef example starts the Reef lab too. An example that fails is stored with its status
and the output it printed; the script then exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "examples"
FAULTLINE = str(REPO / ".venv" / "bin" / "faultline")
RUN_PAGE = re.compile(r"/runs/(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Example:
    name: str
    experiment: str
    cluster: str
    zone: str = ""  # the zone a power-off-zone experiment takes, if not the file's

    @property
    def lab(self) -> list[str]:
        """`faultline lab up` arguments for the lab the example runs on."""
        if self.cluster == "lab-ceph-reef":
            return ["ceph", "--release", "reef"]
        return ["swift" if self.cluster == "lab-swift" else "ceph"]


# The Ceph lossy link is last of its system: Ceph's slow-heartbeat warning holds HEALTH_OK
# back for about 15 minutes after the restore, and the experiment waits for it.
EXAMPLES = [
    Example("ceph-hang-osd", "experiments/ceph-hang-osd.json", "lab-ceph"),
    Example("ceph-throttle-osd-disk", "experiments/ceph-throttle-osd-disk.json", "lab-ceph"),
    Example("ceph-cpu-hog", "experiments/ceph-cpu-hog.json", "lab-ceph"),
    Example("ceph-exhaust-memory", "experiments/ceph-exhaust-memory.json", "lab-ceph"),
    Example("ceph-corrupt-replica", "experiments/ceph-corrupt-replica.json", "lab-ceph"),
    Example("ceph-scale-out", "experiments/ceph-scale-out.json", "lab-ceph"),
    Example("swift-hang-object-server", "experiments/swift-hang-object-server.json",
            "lab-swift"),
    Example("swift-lossy-link", "experiments/swift-lossy-link.json", "lab-swift"),
    Example("swift-throttle-object-disk", "experiments/swift-throttle-object-disk.json",
            "lab-swift"),
    Example("swift-cpu-hog", "experiments/swift-cpu-hog.json", "lab-swift"),
    Example("swift-exhaust-memory", "experiments/swift-exhaust-memory.json", "lab-swift"),
    Example("swift-corrupt-replica", "experiments/swift-corrupt-replica.json", "lab-swift"),
    Example("swift-scale-out", "experiments/swift-scale-out.json", "lab-swift"),
    Example("ceph-lossy-link", "experiments/ceph-lossy-link.json", "lab-ceph"),
    # zone1 holds the Reef lab's only monitor, so the zone experiment takes zone2 there
    Example("reef-power-off-zone2", "experiments/ceph-power-off-zone.json", "lab-ceph-reef",
            zone="zone2"),
]


def with_zone(document: dict, zone: str) -> dict:
    """The experiment with every activity's `zone` argument set to `zone`."""
    for activity in [*document.get("method", []), *document.get("rollbacks", [])]:
        arguments = activity.get("provider", {}).get("arguments", {})
        if "zone" in arguments:
            arguments["zone"] = zone
    return document


def commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                          capture_output=True, text=True, check=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.strip()
    return done.stdout.strip() + ("+changes" if dirty else "")


def run_example(example: Example, work: Path) -> dict:
    subprocess.run([FAULTLINE, "lab", "up", *example.lab], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL)
    experiment = example.experiment
    if example.zone:
        document = with_zone(json.loads((REPO / experiment).read_text()), example.zone)
        experiment = str(work / f"{example.name}.json")
        Path(experiment).write_text(json.dumps(document, indent=2))
    command = [FAULTLINE, "run", experiment, "--cluster", example.cluster]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_before = os.getloadavg()[0]
    began = time.monotonic()
    # its log goes to the terminal as it runs; its report (stdout) is kept
    done = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    elapsed = time.monotonic() - began
    found = RUN_PAGE.findall(done.stdout)
    record = {
        "example": example.name, "experiment": example.experiment,
        "cluster": example.cluster, "zone": example.zone or None,
        "command": ["faultline", "run", example.experiment, "--cluster", example.cluster],
        "commit": commit(), "started": started, "exit": done.returncode,
        "elapsed_s": round(elapsed, 1),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "run_id": int(found[-1]) if found else None,
    }
    if record["run_id"] is not None:
        report = subprocess.run([FAULTLINE, "report", str(record["run_id"]), "--json"],
                                cwd=REPO, capture_output=True, text=True, check=True)
        record["report"] = json.loads(report.stdout)
    else:
        record["output"] = done.stdout[-8000:]
    return {"record": record, "text": done.stdout}


def store(example: Example, result: dict) -> None:
    record = result["record"]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{example.name}.json").write_text(json.dumps(record, indent=2) + "\n")
    header = (f"$ {' '.join(record['command'])}\n"
              f"# {record['started']}, commit {record['commit']}, exit {record['exit']}, "
              f"{record['elapsed_s']} s, load average {record['load_average'][0]} then "
              f"{record['load_average'][1]}"
              + (f", the zone argument set to {example.zone}" if example.zone else "")
              + "\n\n")
    (OUT / f"{example.name}.txt").write_text(header + result["text"])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated example names")
    parser.add_argument("--list", action="store_true", help="list the examples and exit")
    args = parser.parse_args(argv)
    if args.list:
        for example in EXAMPLES:
            print(f"{example.name:28} {example.experiment} on {example.cluster}")
        return 0
    chosen = EXAMPLES
    if args.only:
        names = args.only.split(",")
        unknown = sorted(set(names) - {e.name for e in EXAMPLES})
        if unknown:
            print(f"error: no such example: {', '.join(unknown)} (see --list)",
                  file=sys.stderr)
            return 2
        chosen = [e for e in EXAMPLES if e.name in names]
    if any(e.cluster != "lab-ceph-reef" for e in chosen):
        # both Pacific labs, as the catalogue's experiments are run (the other lab's idle
        # daemons are part of the condition the figures were taken in)
        subprocess.run([FAULTLINE, "lab", "up"], cwd=REPO, check=True)
    failed = []
    with tempfile.TemporaryDirectory(prefix="faultline-examples-") as work:
        for example in chosen:
            print(f"== {example.name}", flush=True)
            result = run_example(example, Path(work))
            store(example, result)
            record = result["record"]
            print(f"   run {record['run_id']}, exit {record['exit']}, "
                  f"{record['elapsed_s']} s", flush=True)
            if record["exit"] != 0:
                failed.append(example.name)
    if failed:
        print(f"did not complete: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
