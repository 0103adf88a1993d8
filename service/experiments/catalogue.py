"""The experiment catalogue: the experiment files of a directory and its suites.

The dashboard lists them (the files service.experiments.library finds, described for a
page) and triggers runs of them by name (the file's stem): a name
that is not a file of the directory is refused, so a request never reads an arbitrary
path. Entries are read as plain JSON for the listing; a run is checked in full by
service.experiments.documents when it is queued.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import library
from .documents import CONTROL_MODULE
from .exceptions import CatalogueError

SYSTEMS = ("ceph", "swift")
DEFAULT_DIR = library.default_directory()


@dataclass(frozen=True)
class ExperimentEntry:
    name: str
    path: str  # absolute: a worker in any directory finds it
    title: str
    description: str = ""
    system: str | None = None  # the cluster kind it is written for; None: any
    fault: str | None = None  # the fault activity's name, e.g. "kill-osd"
    restore: str | None = None
    api: str | None = None  # the load API it asks for; None: the cluster's native one
    workload: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None  # why the file cannot be read, if it cannot


@dataclass(frozen=True)
class SuiteEntry:
    name: str
    path: str
    title: str
    description: str = ""
    runs: tuple[dict[str, Any], ...] = ()
    problem: str | None = None


def experiments(directory: Path = DEFAULT_DIR) -> list[ExperimentEntry]:
    return [_experiment(p) for p in library.files(directory).values()]


def suites(directory: Path = DEFAULT_DIR) -> list[SuiteEntry]:
    return [_suite(p) for p in library.suite_files(directory).values()]


def experiment(name: str, directory: Path = DEFAULT_DIR) -> ExperimentEntry:
    for entry in experiments(directory):
        if entry.name == name:
            return entry
    raise CatalogueError(f"experiment {name!r} does not exist in {directory}")


def suite(name: str, directory: Path = DEFAULT_DIR) -> SuiteEntry:
    for entry in suites(directory):
        if entry.name == name:
            return entry
    raise CatalogueError(f"suite {name!r} does not exist in {Path(directory) / 'suites'}")


def _read(path: Path) -> tuple[dict[str, Any], str | None]:
    try:
        raw = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return {}, f"cannot read {path.name}: {exc}"
    if not isinstance(raw, dict):
        return {}, f"{path.name} is not a JSON object"
    return raw, None


def _experiment(path: Path) -> ExperimentEntry:
    raw, problem = _read(path)
    control = next((c for c in raw.get("controls") or []
                    if (c.get("provider") or {}).get("module") == CONTROL_MODULE), None)
    arguments = ((control or {}).get("provider") or {}).get("arguments") or {}
    if not problem and control is None:
        problem = f"{path.name} declares no {CONTROL_MODULE} control"
    systems = [t for t in raw.get("tags") or [] if t in SYSTEMS]
    return ExperimentEntry(
        name=path.stem, path=str(path.resolve()), title=str(raw.get("title") or path.stem),
        description=str(raw.get("description") or ""), system=systems[0] if systems else None,
        fault=arguments.get("fault"), restore=arguments.get("restore"), api=arguments.get("api"),
        workload=dict(arguments.get("workload") or {}), problem=problem)


def _suite(path: Path) -> SuiteEntry:
    raw, problem = _read(path)
    runs = tuple(r for r in raw.get("runs") or [] if isinstance(r, dict))
    return SuiteEntry(name=path.stem, path=str(path.resolve()),
                      title=str(raw.get("title") or path.stem),
                      description=str(raw.get("description") or ""), runs=runs, problem=problem)
