"""Suites: several experiment files run one after the other, then compared side by side.

A suite file is JSON:

    {"title": "Kill one storage process, three ways",
     "description": "optional free text",
     "runs": [
       {"name": "ceph-librados", "experiment": "experiments/ceph-kill-osd.json"},
       {"name": "ceph-rgw-swift-api", "experiment": "experiments/ceph-rgw-kill-osd.json"},
       {"name": "swift", "experiment": "experiments/swift-kill-object-server.json",
        "cluster": "lab-swift"}]}

- `title` and `runs` (at least two entries) are required; `description` is optional.
- Each entry needs a unique `name` and an `experiment` file; `cluster` is optional, and
  so is `trials` (default 1): the experiment is repeated that many times, with whatever
  fault a trial left restored and the cluster healthy again in between, and its runs are
  compared as one group, each figure with its spread (service.results.trial_groups).
- `workload` (optional) replaces fields of every entry's workload: the same load for every
  system compared, e.g. `{"rate": "10%"}` (each at that share of its own calibrated
  capacity); `calibration` (optional) is the control's `calibration` argument for every
  entry: how a calibration is made when one is needed (service.results.capacity);
  `tail_s` (optional) is the control's `tail_s` for every entry: how long the load stays
  on after each experiment.
- Relative experiment paths are taken from the current directory, exactly as
  `faultline run` and `chaos run` take them (run suites from the repository root).
- The cluster of an entry is its `cluster`, else the default the experiment file
  itself gives its `faultline_cluster` configuration, else FAULTLINE_CLUSTER as it
  was when the suite started (lab-ceph when unset). A suite mixes systems, so one
  environment variable cannot name every entry's target.

The whole file is checked before anything runs (keys, names, each experiment
file loads and declares a valid Faultline workload, each cluster is in the
inventory) and every problem is reported in one SuiteError. Node reachability
is checked by each run as it starts, as `faultline run` does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from clusters.access.inventory import load_inventory
from clusters.exceptions import InventoryError
from clusters.paths import default_cluster, default_inventory
from loadgen.exceptions import WorkloadError
from loadgen.workload import parse_workload
from service.results.capacity import run_settings
from service.results.comparison import compare_entries, run_entry, unrecorded_entry
from service.results.exceptions import InvalidCalibration
from service.results.figures import get_run

from . import documents
from .exceptions import PreflightError, SuiteError
from .plan import tail_seconds
from .preflight import check_protected
from .repeats import MAX_TRIALS, Settle, final, not_recorded, repeat

logger = logging.getLogger("chaostoolkit")

SUITE_KEYS = {"title", "description", "runs", "workload", "calibration", "tail_s"}
RUN_KEYS = {"name", "experiment", "cluster", "trials"}

Runner = Callable[[str, str | None, str | None], dict[str, Any]]


@dataclass(frozen=True)
class SuiteRun:
    name: str
    experiment: str
    cluster: str
    cluster_kind: str
    title: str
    workload: dict[str, Any]
    api: str | None = None  # the control's "api" argument, if the experiment names one
    trials: int = 1


@dataclass(frozen=True)
class Suite:
    path: str
    title: str
    inventory: str
    runs: tuple[SuiteRun, ...]
    workload: dict[str, Any] = field(default_factory=dict)  # replaces fields of every entry's
    calibration: dict[str, Any] | None = None  # the control's argument, for every entry
    tail_s: float | None = None  # the control's argument, for every entry

    def document(self, path: str) -> dict[str, Any]:
        """An entry's experiment as the suite runs it: its workload, calibration and tail
        set."""
        experiment = documents.with_workload(documents.load(path), self.workload)
        arguments = documents.control_arguments(experiment)
        if self.calibration is not None:
            arguments["calibration"] = self.calibration
        if self.tail_s is not None:
            arguments["tail_s"] = self.tail_s
        return experiment


def load_suite(path: str | Path, inventory: str | Path | None = None) -> Suite:
    """Read and check a suite file as a whole; raise SuiteError naming every problem."""
    path = Path(path)
    if not path.is_file():
        raise SuiteError(f"suite file {path} does not exist")
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise SuiteError(f"suite file {path} is not valid JSON: {exc}") from None
    except OSError as exc:
        raise SuiteError(f"cannot read suite file {path}: {exc}") from None
    inventory = str(inventory or default_inventory())
    problems: list[str] = []
    runs = _check_suite(raw, inventory, problems)
    if problems:
        raise SuiteError(f"invalid suite {path}: " + "; ".join(problems))
    clusters = load_inventory(inventory)
    for run in runs:  # a fault on a protected cluster: no run of the suite (403 if queued)
        check_protected(documents.load(run.experiment), clusters[run.cluster])
    return Suite(path=str(path), title=raw["title"], inventory=inventory, runs=tuple(runs),
                 workload=raw.get("workload") or {}, calibration=raw.get("calibration"),
                 tail_s=raw.get("tail_s"))


def _check_suite(raw: Any, inventory: str, problems: list[str]) -> list[SuiteRun]:
    if not isinstance(raw, dict):
        problems.append("expected a JSON object with 'title' and 'runs'")
        return []
    problems += [f"unknown key {k!r}" for k in sorted(set(raw) - SUITE_KEYS)]
    problems += [f"missing key {k!r}" for k in ("title", "runs") if k not in raw]
    if "title" in raw and not (isinstance(raw["title"], str) and raw["title"].strip()):
        problems.append("'title' must be a non-empty string")
    overrides = raw.get("workload") or {}
    if not isinstance(overrides, dict):
        problems.append("'workload' must be an object of workload fields")
        overrides = {}
    if raw.get("calibration") is not None:
        try:
            run_settings(raw["calibration"])
        except InvalidCalibration as exc:
            problems.append(str(exc))
    if raw.get("tail_s") is not None:
        try:
            tail_seconds(raw["tail_s"])
        except PreflightError as exc:
            problems.append(str(exc))
    entries = raw.get("runs")
    if entries is None:
        return []
    if not isinstance(entries, list) or len(entries) < 2:
        problems.append("'runs' must be a list of at least two runs to compare")
        return []
    clusters = _clusters(inventory, problems)
    fallback = default_cluster()
    runs, names = [], set()
    for i, entry in enumerate(entries):
        run = _check_run(i, entry, names, clusters, fallback, overrides, problems)
        if run is not None:
            runs.append(run)
    return runs


def _clusters(inventory: str, problems: list[str]) -> dict[str, str] | None:
    """Cluster name -> kind, or None (with the problem noted) if the inventory is unusable."""
    try:
        return {name: c.kind for name, c in load_inventory(inventory).items()}
    except InventoryError as exc:
        problems.append(str(exc))
        return None


def _check_run(i: int, entry: Any, names: set[str], clusters: dict[str, str] | None,
               fallback: str, overrides: dict[str, Any], problems: list[str]
               ) -> SuiteRun | None:
    where = f"runs[{i}]"
    if not isinstance(entry, dict):
        problems.append(f"{where} must be an object with 'name' and 'experiment'")
        return None
    name = entry.get("name")
    if isinstance(name, str) and name.strip():
        where += f" ({name})"
    before = len(problems)
    problems += [f"{where}: unknown key {k!r}" for k in sorted(set(entry) - RUN_KEYS)]
    problems += [f"{where}: missing key {k!r}" for k in ("name", "experiment") if k not in entry]
    if "name" in entry:
        if not (isinstance(name, str) and name.strip()):
            problems.append(f"{where}: 'name' must be a non-empty string")
        elif name in names:
            problems.append(f"{where}: the name {name!r} is used twice")
        else:
            names.add(name)
    trials = entry.get("trials", 1)
    if isinstance(trials, bool) or not isinstance(trials, int) or not 1 <= trials <= MAX_TRIALS:
        problems.append(f"{where}: 'trials' must be a whole number from 1 to {MAX_TRIALS}, "
                        f"not {trials!r}")
    cluster = entry.get("cluster")
    if cluster is not None and not (isinstance(cluster, str) and cluster.strip()):
        problems.append(f"{where}: 'cluster' must be a non-empty string")
        cluster = None
    path = entry.get("experiment")
    experiment, workload = None, {}
    if "experiment" in entry:
        if not (isinstance(path, str) and path.strip()):
            problems.append(f"{where}: 'experiment' must be a path to an experiment file")
        else:
            experiment, workload = _check_experiment(where, path, overrides, problems)
    if experiment is None:
        return None
    cluster = cluster or _configured_cluster(experiment) or fallback
    if clusters is not None and cluster not in clusters:
        problems.append(f"{where}: unknown cluster {cluster!r} "
                        f"(known: {', '.join(sorted(clusters)) or 'none'})")
    if len(problems) > before or clusters is None:
        return None
    api = documents.faultline_control(experiment)["provider"].get("arguments", {}).get("api")
    return SuiteRun(name=name, experiment=path, cluster=cluster, cluster_kind=clusters[cluster],
                    title=experiment.get("title", "untitled"), workload=workload,
                    api=api if isinstance(api, str) else None, trials=trials)


def _check_experiment(where: str, path: str, overrides: dict[str, Any],
                      problems: list[str]) -> tuple[dict | None, dict[str, Any]]:
    """The experiment loaded and checked like `faultline run` does, minus the cluster."""
    if not Path(path).is_file():
        problems.append(f"{where}: experiment file {path} does not exist "
                        f"(relative paths are taken from the current directory, {Path.cwd()})")
        return None, {}
    try:
        experiment = documents.load(path)
    except documents.ExperimentError as exc:
        problems.append(f"{where}: {exc}")
        return None, {}
    if documents.faultline_control(experiment) is None:
        problems.append(f"{where}: {path} declares no {documents.CONTROL_MODULE} control, "
                        "so Faultline would record nothing")
        return None, {}
    experiment = documents.with_workload(experiment, overrides)  # as the suite runs it
    control = documents.faultline_control(experiment)
    try:
        workload = parse_workload(control["provider"]["arguments"]["workload"])
    except WorkloadError as exc:
        problems.append(f"{where}: {path}: {exc}")
        return None, {}
    return experiment, workload.as_dict()


def _configured_cluster(experiment: dict[str, Any]) -> str | None:
    value = (experiment.get("configuration") or {}).get("faultline_cluster")
    if isinstance(value, dict):
        value = value.get("default")
    return value if isinstance(value, str) and value else None


def run_suite(suite: Suite, sessions: sessionmaker[Session], runner: Runner,
              settle: Settle | None = None,
              stopped: Callable[[], str | None] = lambda: None) -> dict[str, Any]:
    """Run each experiment in turn, each `trials` times (a failure does not stop the
    others); compare the runs.

    Returns the suite's title, one outcome per run (name, trial of trials, run id, status,
    error),
    `ok` (every run completed) and the comparison of the runs, failed ones included (not
    those a stop kept from starting; None when fewer than two are left).
    `runner` runs one experiment file as the suite makes it (service.runs.launch.for_suite);
    `settle` restores and waits for health between two trials of an entry; once `stopped()`
    gives a reason (an operator's Ctrl-C), no further run starts and each says why.
    """
    outcomes, items = [], []
    for item in suite.runs:
        _, trials = repeat(sessions, item.trials, item.cluster, suite.inventory,
                           partial(_run_one, suite, item, runner), settle,
                           f"Suite {suite.title!r}: {item.name} ({item.experiment} on "
                           f"{item.cluster})", stopped)
        for outcome in trials:
            outcomes.append({"name": item.name, **outcome, "experiment": item.experiment,
                             "cluster": item.cluster})
            items.append(item)
    entries = []
    with sessions() as session:
        for item, outcome in zip(items, outcomes, strict=True):
            if outcome.get("stopped"):
                outcome["status"] = "not run"
                continue
            if outcome["run_id"] is None:
                entry = unrecorded_entry(name=item.name, title=item.title, cluster=item.cluster,
                                         cluster_kind=item.cluster_kind,
                                         workload=item.workload, error=outcome["error"],
                                         api=item.api)
            else:
                entry = {**run_entry(get_run(session, outcome["run_id"])), "name": item.name}
            outcome["status"] = entry["status"]
            outcome["error"] = outcome["error"] or entry["error"]
            entries.append(entry)
    return {"title": suite.title, "suite": suite.path, "runs": outcomes,
            "ok": all(o["status"] == "completed" for o in final(outcomes)),
            # fewer than two when a Ctrl-C stopped the suite early: nothing to compare
            "comparison": compare_entries(entries) if len(entries) > 1 else None}


def _run_one(suite: Suite, item: SuiteRun, runner: Runner) -> tuple[int | None, str | None]:
    """(run id, error) of one run of an entry; its failure must not stop the suite."""
    try:
        journal = runner(item.experiment, item.cluster, suite.inventory)
    except Exception as exc:
        logger.exception(f"Suite {suite.title!r}: {item.name} failed")
        return None, str(exc) or type(exc).__name__
    run_id = journal.get("faultline_run_id")
    return run_id, not_recorded(journal) if run_id is None else None
