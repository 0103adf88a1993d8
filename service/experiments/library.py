"""The experiments a run or a schedule may name: the files under `experiments/` (the name is
the file's stem, e.g. `ceph-kill-osd`; suites under `experiments/suites/` are not
experiments) and the ones uploaded through the API (table `uploaded_experiments`).

An upload is checked before it is stored, as a file is before it runs: since the workers
would run it, only Faultline's own code (service.experiments.allowlist, checked before
chaoslib imports any module the document names), then chaoslib's
`ensure_experiment_is_valid`, and the Faultline control (service.control) with a workload
that parses. A guard override (allow_unavailable) needs the admin role. Its name may be
neither a file's nor another upload's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from chaoslib.exceptions import ChaosException
from chaoslib.experiment import ensure_experiment_is_valid
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from loadgen.exceptions import WorkloadError
from service.accounts import audit
from service.store.models import UploadedExperiment

from . import allowlist, documents
from .exceptions import ExperimentExists, ExperimentNotFound, NotAnUpload
from .plan import plan_of
from .suites import SuiteError

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
FILE, UPLOAD = "file", "upload"


@dataclass(frozen=True)
class Entry:
    """One experiment of the catalogue; `path` for a file, `uploaded_*` for an upload."""

    name: str
    source: str  # FILE or UPLOAD
    title: str | None
    description: str | None
    path: str | None = None
    uploaded_by: str | None = None
    uploaded_at: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "title": self.title,
                "description": self.description, "path": self.path,
                "uploaded_by": self.uploaded_by,
                "uploaded_at": self.uploaded_at.isoformat() if self.uploaded_at else None}


def default_directory() -> Path:
    """The repository's experiments/ (beside service/, as migrations/ is)."""
    return Path(__file__).resolve().parents[2] / "experiments"


def files(directory: Path) -> dict[str, Path]:
    """name -> path of every experiment file (not the suites)."""
    return {p.stem: p for p in sorted(Path(directory).glob("*.json")) if p.is_file()}


def suite_files(directory: Path) -> dict[str, Path]:
    """name -> path of every suite under `<directory>/suites/`."""
    return {p.stem: p for p in sorted((Path(directory) / "suites").glob("*.json"))
            if p.is_file()}


def list_all(sessions: sessionmaker[Session], directory: Path) -> list[Entry]:
    """Every experiment: the files by name, then the uploads by name."""
    entries = [_file_entry(name, path) for name, path in files(directory).items()]
    with sessions() as session:
        uploads = session.execute(select(UploadedExperiment)
                                  .order_by(UploadedExperiment.name)).scalars().all()
        return entries + [_upload_entry(u) for u in uploads]


def get(sessions: sessionmaker[Session], directory: Path,
        name: str) -> tuple[Entry, dict[str, Any]]:
    """An experiment and its document; a file is loaded and checked as `faultline run` does
    (ExperimentError if it does not validate)."""
    path = files(directory).get(name)
    if path is not None:
        return _file_entry(name, path), documents.load(path)
    with sessions() as session:
        upload = _upload(session, name)
        if upload is None:
            raise ExperimentNotFound(f"experiment '{name}' does not exist")
        return _upload_entry(upload), upload.document


def file_path(directory: Path, name: str) -> str:
    """The path of an experiment file by name (schedules run files only)."""
    path = files(directory).get(name)
    if path is None:
        raise ExperimentNotFound(f"experiment '{name}' is not a file under {directory}")
    return str(path)


def suite_path(directory: Path, value: str) -> str:
    """The path of a suite under `<directory>/suites/`, given its name (`kill-process`) or
    its path (`experiments/suites/kill-process.json`); SuiteError if there is none."""
    suites = suite_files(directory)
    given = Path(value)
    name = given.stem if given.suffix == ".json" else given.name
    if (len(given.parts) > 1 and given.parent.name != "suites") or name not in suites:
        raise SuiteError(f"unknown suite {value!r}: give the name of a suite under "
                         f"{directory / 'suites'} (known: {', '.join(suites) or 'none'})")
    return str(suites[name])


def upload(sessions: sessionmaker[Session], directory: Path, name: str,
           document: Any, uploaded_by: str | None = None, role: str | None = None) -> Entry:
    """Check and store an uploaded experiment; nothing is stored if a check fails (a guard
    override from someone not an admin: GuardOverrideRefused)."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise documents.ExperimentError(
            f"{name!r} is not a valid experiment name: up to 100 letters, digits and . _ -, "
            "starting with a letter or digit")
    check_upload(document)
    override_by = allowlist.check_guard_overrides(document, uploaded_by, role)
    if name in files(directory):
        raise ExperimentExists(f"experiment '{name}' exists already (a file under "
                               f"{directory})")
    row = UploadedExperiment(name=name, title=str(document["title"])[:500], document=document,
                             uploaded_by=uploaded_by)
    try:
        with sessions.begin() as session:
            if _upload(session, name) is not None:
                raise ExperimentExists(f"experiment '{name}' exists already (uploaded)")
            session.add(row)
            session.flush()
            if override_by:  # in the upload's own transaction
                audit.record(session, override_by, "guard.override", f"experiment {name}",
                             {"overrides": allowlist.guard_overrides(document)})
            session.refresh(row)  # its upload time
            entry = _upload_entry(row)
    except IntegrityError:  # uploaded by someone else since the check
        raise ExperimentExists(f"experiment '{name}' exists already (uploaded)") from None
    return entry


def delete_upload(sessions: sessionmaker[Session], directory: Path, name: str) -> None:
    """Delete an uploaded experiment; the runs made from it keep their own copy."""
    if name in files(directory):
        raise NotAnUpload(f"experiment '{name}' is a file under {directory}; only uploaded "
                          "experiments can be deleted")
    with sessions.begin() as session:
        row = _upload(session, name)
        if row is None:
            raise ExperimentNotFound(f"experiment '{name}' does not exist")
        session.delete(row)


def check_upload(document: Any) -> None:
    """ExperimentError (or WorkloadError) saying why the document may not be stored."""
    allowlist.check(document)  # before chaoslib imports the modules it names
    try:
        ensure_experiment_is_valid(document)
    except ChaosException as exc:
        raise documents.ExperimentError(f"not a valid experiment: {exc}") from None
    control = documents.faultline_control(document)
    if control is None:
        raise documents.ExperimentError(
            f"the experiment declares no {documents.CONTROL_MODULE} control, so Faultline "
            "would record nothing")
    try:
        plan_of(document, control["provider"].get("arguments") or {})
    except WorkloadError as exc:
        raise documents.ExperimentError(str(exc)) from None


def _upload(session: Session, name: str) -> UploadedExperiment | None:
    return session.execute(select(UploadedExperiment)
                           .where(UploadedExperiment.name == name)).scalar_one_or_none()


def _file_entry(name: str, path: Path) -> Entry:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        document = {}  # shown by name; GET or a run says what is wrong with it
    document = document if isinstance(document, dict) else {}
    return Entry(name=name, source=FILE, title=document.get("title"),
                 description=document.get("description"), path=str(path))


def _upload_entry(row: UploadedExperiment) -> Entry:
    return Entry(name=row.name, source=UPLOAD, title=row.title,
                 description=row.document.get("description"), uploaded_by=row.uploaded_by,
                 uploaded_at=row.uploaded_at)
