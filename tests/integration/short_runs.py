"""Short Ceph experiments with the Faultline control, for the tests that need a real run
but not a real fault: a light load, a short baseline, activities that only hold the run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


def short_experiment(title: str, method: list[dict], rollbacks: list[dict] | None = None, *,
                     rate: float = 10, baseline_s: float = 3, **control: Any) -> dict:
    """`control` adds to or replaces the control's arguments (tail_s 1, no restore)."""
    return {
        "version": "1.0.0", "title": title, "description": "a short test run",
        "configuration": {"faultline_cluster": {"type": "env", "key": "FAULTLINE_CLUSTER",
                                                "default": "lab-ceph"}},
        "controls": [{"name": "faultline", "provider": {
            "type": "python", "module": "service.control", "arguments": {
                "workload": {"containers": 1, "objects_per_container": 20,
                             "object_size": 4096, "mix": {"read": 80, "write": 20},
                             "rate": rate, "ramp_s": 1, "baseline_s": baseline_s},
                "tail_s": 1, "restore": None, **control}}}],
        "method": method,
        "rollbacks": rollbacks or [],
    }


def pause(seconds: float) -> dict:
    """An activity that changes nothing and holds the run (and its cluster) for a while: a
    read of the cluster's health, since the allow-list runs none but Faultline's functions."""
    return {"type": "probe", "name": "hold", "pauses": {"after": seconds}, "provider": {
        "type": "python", "module": "probes.ceph", "func": "health_ok",
        "arguments": {"settle_s": 0}}}


def shortened(source: Path, directory: Path, *, fault_hold_s: float | None = None,
              rate: float | None = None, **control: Any) -> Path:
    """A copy, written in `directory`, of a catalogue experiment with the test's short
    phases: a 2 s ramp, a 10 s baseline and, if given, a shorter hold after the fault (fewer
    writes land on handoffs, so Swift has less to move back); `control` adds to or replaces
    the control's arguments. The tail stays unless replaced: the samples must see the
    recovery. `rate` replaces the workload's (a lab server near its capacity, beside the
    other stream's load). What the experiment injects and checks is unchanged."""
    experiment = json.loads(source.read_text())
    arguments = experiment["controls"][0]["provider"]["arguments"]
    arguments["workload"].update(ramp_s=2, baseline_s=10)
    if rate is not None:
        arguments["workload"]["rate"] = rate
    arguments.update(control)
    if fault_hold_s is not None:
        fault = arguments["fault"]
        step = next(a for a in experiment["method"] if a["name"] == fault)
        step["pauses"] = {"after": fault_hold_s}
    path = directory / source.name
    path.write_text(json.dumps(experiment))
    return path


def stock_chaos_run(experiment: Path, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """The stock Chaos Toolkit CLI on an experiment file, rollbacks always, its journal in
    `cwd`."""
    return subprocess.run(
        ["chaos", "--no-version-check", "run", "--rollback-strategy", "always",
         "--journal-path", str(cwd / "journal.json"), str(experiment)],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
