"""Compare runs side by side: each run's report, one table of figures, and the caveats.

`compare(session, run_ids)` loads the runs; `compare_entries(entries)` is the pure
part (the table and the caveats) over report dicts, so a suite can also show an
experiment that failed before it recorded a run (`unrecorded_entry`).

Caveats are sentences that explain the known differences between what the runs
measured: the systems (Ceph re-replicates while the fault persists, Swift waits
for the restore; "fully redundant" is defined per system), the load APIs
(librados, the Swift API through RGW or Swift, S3), the workloads and the faults,
and runs that did not complete. They sit next to the numbers, never hide them.
"""

from __future__ import annotations

import textwrap
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from service.store.models import PG_INT_MAX, Run

from .exceptions import CompareError
from .figures import RunNotFound
from .formatting import format_value, label_of
from .recovery_notes import setting_differences
from .report import API_KEYS, FIGURE_KEYS, NOTES, figure_labels, kept_out, report_dict
from .trial_groups import describe, trial_groups

DEFAULT_API = {"ceph": "rados", "swift": "swift"}

SELF_HEALING = (
    "Ceph marks a down OSD out after mon_osd_down_out_interval and re-replicates, so it can "
    "be fully redundant while the fault persists; Swift treats a down server as transient "
    "and waits for the restore (its time to full redundancy while the fault persists is "
    "normally n/a: compare the time to full redundancy after the restore).")
FULLY_REDUNDANT = (
    "Swift 'fully redundant' means every server answering, dispersion 100% (a 25% sample "
    "of partitions) and no handoff partition on any ring, and after the restore also an "
    "object replication pass on every node that began after it; Ceph's means HEALTH_OK "
    "with all PGs active+clean and, after the restore, every OSD up and in.")
RGW_PATH = (
    "librados and RGW (its Swift or S3 API) load the same Ceph cluster through different "
    "paths: RGW adds an HTTP gateway (its own threads, queues and timeouts) in front of the "
    "same OSDs, so latency and errors include the gateway's.")



def load_api(run: Run) -> str:
    """The API the run's load went through: 'rados', 'swift' or 's3'.

    Runs recorded before the column existed went through the cluster kind's native API.
    """
    return run.load_api or DEFAULT_API.get(run.cluster_kind, run.cluster_kind)


def fault_of(run: Run) -> str | None:
    """Name of the fault activity that was injected, None when no fault was injected."""
    for event in run.events:
        if event.kind == "fault_injected":
            return event.detail.get("name") or "unnamed fault"
    return None


def run_entry(run: Run) -> dict[str, Any]:
    """A run's report (report.report_dict) with its load API and fault."""
    return {**report_dict(run), "api": load_api(run), "fault": fault_of(run)}


def unrecorded_entry(*, name: str, title: str, cluster: str, cluster_kind: str,
                     workload: dict[str, Any], error: str,
                     api: str | None = None) -> dict[str, Any]:
    """An entry for an experiment that failed before it recorded a run: every figure n/a."""
    entry: dict[str, Any] = {
        "run_id": None, "name": name, "title": title, "cluster": cluster,
        "cluster_kind": cluster_kind, "status": "failed", "started_at": None, "ended_at": None,
        "workload": workload, "error": error,
        "api": api or DEFAULT_API.get(cluster_kind, cluster_kind),
        "fault": None, "verify": None, "release": None, "note": NOTES.get(cluster_kind),
        "topology_note": [], "recovery_settings": None, "recovery_note": [],
    }
    for key in API_KEYS:
        entry[key] = None
    entry["reasons"] = {key: "the experiment failed before Faultline recorded a run"
                        for key in API_KEYS}
    return entry


# twice the most trials of one group (service.experiments.repeats.MAX_TRIALS), so a
# group of trials and its rerun fit; past it a page and its chart are unreadable anyway
MAX_COMPARED_RUNS = 100
TOO_MANY = f"a comparison takes at most {MAX_COMPARED_RUNS} runs"


def parse_run_ids(values: list[str]) -> list[int]:
    """Run ids from query values, each one id or several separated by commas; at most
    MAX_COMPARED_RUNS of them."""
    ids = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            if not part.isdigit() or int(part) > PG_INT_MAX:
                raise CompareError(f"{part[:60]!r} is not a run id")
            ids.append(int(part))
            if len(ids) > MAX_COMPARED_RUNS:
                raise CompareError(TOO_MANY)
    return ids


def compare(session: Session, run_ids: list[int]) -> dict[str, Any]:
    """Compare stored runs, in the order given (a repeated id counts once)."""
    ids = list(dict.fromkeys(run_ids))
    if len(ids) < 2:
        raise CompareError(f"a comparison needs at least two different runs, got {len(ids)}")
    if len(ids) > MAX_COMPARED_RUNS:
        raise CompareError(TOO_MANY)
    runs = {r.id: r for r in session.execute(
        select(Run).where(Run.id.in_(ids)).options(selectinload(Run.events))).scalars()}
    missing = [str(i) for i in ids if i not in runs]
    if len(missing) == 1:
        raise RunNotFound(f"run {missing[0]} does not exist")
    if missing:
        raise RunNotFound(f"runs {', '.join(missing)} do not exist")
    return compare_entries([run_entry(runs[i]) for i in ids])


def compare_entries(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The side-by-side table and the caveats of run entries (run_entry/unrecorded_entry)."""
    if len(entries) < 2:
        raise CompareError(f"a comparison needs at least two runs, got {len(entries)}")
    table = {key: [_cell(e, key) for e in entries] for key in FIGURE_KEYS}
    return {"run_ids": [e["run_id"] for e in entries], "runs": entries, "table": table,
            "labels": figure_labels(), "caveats": caveats(entries),
            "trials": trial_groups(entries, table, format_value)}


def _cell(entry: dict[str, Any], key: str) -> dict[str, Any]:
    """One run's figure in the table. A run whose baseline did not hold is kept out of the
    comparison (nothing was injected); one that injected anyway keeps its figure, with a
    warning beside it."""
    if kept_out(entry):
        return {"value": None, "reason": "its baseline did not hold: not comparable"}
    cell = {"value": entry.get(key), "reason": _reason(entry, key)}
    if (entry.get("validity") or {}).get("valid") is False:
        cell["warning"] = "its baseline did not hold (injected anyway)"
    return cell


def _reason(entry: dict[str, Any], key: str) -> str | None:
    if entry.get(key) is not None:
        return None
    reason = (entry.get("reasons") or {}).get(key)
    if reason:
        return reason
    if entry.get("error"):
        return f"the run failed: {entry['error']}"
    if entry.get("status") != "completed":
        return f"the run is {entry.get('status')}"
    return "not measured"


def label(entry: dict[str, Any]) -> str:
    return f"run {entry['run_id']}" if entry.get("run_id") is not None \
        else f"{entry.get('name') or 'an experiment'} (no run recorded)"


def caveats(entries: list[dict[str, Any]]) -> list[str]:
    """Sentences on what differs between the runs beyond the numbers. Pure."""
    out: list[str] = []
    kinds = {e["cluster_kind"] for e in entries}
    if {"ceph", "swift"} <= kinds:
        out += [SELF_HEALING, FULLY_REDUNDANT]
    out += _release_caveats(entries)
    apis = {e["api"] for e in entries}
    if len(apis) > 1:
        out.append("The runs load their clusters through different APIs ("
                   + _per_run(entries, "api") + "): latency includes different client paths, "
                   "and errors are classified differently (errno for librados, HTTP status "
                   "for the Swift API, status and error code for S3).")
        ceph_apis = {e["api"] for e in entries if e["cluster_kind"] == "ceph"}
        if "rados" in ceph_apis and len(ceph_apis) > 1:
            out.append(RGW_PATH)
    differing = _workload_differences(entries)
    shares = {e.get("rate_requested") for e in entries}
    if "rate" in differing and len(shares) == 1 and None not in shares:
        differing.remove("rate")  # by design: each at the same share of its own capacity
        out.append(f"The rates differ ({_per_run(entries, 'rate', workload=True)} ops/s) "
                   f"because each is {shares.pop()} of its own load path's calibrated "
                   "capacity (" + ", ".join(f"{label(e)}: calibration {e.get('calibration_id')}"
                                           for e in entries)
                   + "): the same share of what each can carry, not the same absolute load.")
    if differing:
        out.append("The workloads differ in " + "; ".join(
            f"{key} ({_per_run(entries, key, workload=True)})" for key in differing)
            + ": the figures were not measured under the same load.")
    if len({e.get("fault") for e in entries}) > 1:
        out.append("The runs injected different faults (" + _per_run(entries, "fault")
                   + "): compare them only as far as the faults are of the same class "
                   "(one process, one disk, one node, one zone).")
    for note in dict.fromkeys(e["fault_note"] for e in entries if e.get("fault_note")):
        out.append(note)
    out += _topology_caveats(entries)
    out += _recovery_caveats(entries)
    for e in entries:
        validity = e.get("validity") or {}
        if validity.get("valid") is False:
            out.append(f"{label(e)}: its baseline did not hold ({'; '.join(validity['reasons'])})"
                       + (": it injected its fault anyway, so its figures (marked !) describe "
                          "an overloaded cluster and are not comparable with a valid run's."
                          if validity.get("injected_anyway") else
                          ": nothing was injected, and it is kept out of the comparison."))
        if e.get("status") != "completed":
            why = f": {e['error']}" if e.get("error") else ""
            out.append(f"{label(e)} did not complete (status {e.get('status')}){why}; "
                       "its figures may be missing or incomplete.")
    return out


def _release_caveats(entries: list[dict[str, Any]]) -> list[str]:
    """Runs of one kind of system on different releases: the comparison is across versions,
    so a difference may come from the release as much as from the fault or the load."""
    out = []
    for kind in dict.fromkeys(e["cluster_kind"] for e in entries):
        same_kind = [e for e in entries if e["cluster_kind"] == kind]
        if len({e.get("release") for e in same_kind}) > 1:
            out.append(f"The {kind} runs ran on different releases ("
                       + _per_run(same_kind, "release") + "): a difference between them may "
                       "come from the release as much as from the fault or the load.")
    return out


def _topology_caveats(entries: list[dict[str, Any]]) -> list[str]:
    """Each run's topology warnings, once per warning with the runs it applies to."""
    runs: dict[str, list[str]] = {}
    for e in entries:
        for note in e.get("topology_note") or []:
            runs.setdefault(note, []).append(label(e))
    return [f"{', '.join(labels)}: {note}" for note, labels in runs.items()]


def _recovery_caveats(entries: list[dict[str, Any]]) -> list[str]:
    """The recovery settings the runs of one kind ran with differently, then each run's
    settings that are not the release's defaults (a lab's shortened timers), once per note
    with the runs it applies to."""
    runs: dict[str, list[str]] = {}
    for e in entries:
        for note in e.get("recovery_note") or []:
            runs.setdefault(note, []).append(label(e))
    return setting_differences(entries, label) + [
        f"{', '.join(labels)}: {note}" for note, labels in runs.items()]


def _workload_differences(entries: list[dict[str, Any]]) -> list[str]:
    workloads = [e.get("workload") or {} for e in entries]
    keys = sorted(set().union(*workloads) - {"api"})
    return [k for k in keys if len({repr(w.get(k)) for w in workloads}) > 1]


def _per_run(entries: list[dict[str, Any]], key: str, workload: bool = False) -> str:
    def value(e: dict[str, Any]) -> Any:
        v = (e.get("workload") or {}).get(key) if workload else e.get(key)
        return "none" if v is None else v
    return ", ".join(f"{label(e)}: {value(e)}" for e in entries)


def format_comparison(data: dict[str, Any], width: int = 100) -> str:
    """The comparison as a text table: one column per run, one row per figure."""
    entries = data["runs"]
    header = [("run", [str(e["run_id"]) if e["run_id"] is not None else "-" for e in entries])]
    if any(e.get("name") for e in entries):
        header.append(("name", [str(e.get("name") or "") for e in entries]))
    header += [(field, [str(e.get(key) or ("not given" if key == "release" else ""))
                        for e in entries])
               for field, key in (("cluster", "cluster"), ("kind", "cluster_kind"),
                                  ("release", "release"), ("api", "api"),
                                  ("status", "status"))]
    body = [(label_of(key), [format_value(key, cell["value"])
                             + (" !" if cell.get("warning") else "") for cell in cells])
            for key, cells in data["table"].items()]
    first = max(len(name) for name, _ in header + body)
    widths = [max(len(cells[i]) for _, cells in header + body) for i in range(len(entries))]

    def line(name: str, cells: list[str]) -> str:
        return "  ".join([name.ljust(first)] + [c.ljust(w) for c, w in zip(cells, widths,
                                                                              strict=True)]
                         ).rstrip()

    lines = [line(name, cells) for name, cells in header]
    lines.append("-" * len(max(lines, key=len)))
    lines += [line(name, cells) for name, cells in body]
    if data["caveats"]:
        lines += ["", "Caveats:"]
        lines += [textwrap.fill(c, width, initial_indent="  - ", subsequent_indent="    ")
                  for c in data["caveats"]]
    lines += _trials_lines(data.get("trials"), width)
    not_measured = [line for i, e in enumerate(entries)
                    for line in _not_measured(e, {key: cells[i]["reason"]
                                                  for key, cells in data["table"].items()
                                                  if cells[i]["reason"]})]
    if not_measured:
        lines += ["", "Not measured (n/a):"] + not_measured
    return "\n".join(lines)


def _trials_lines(trials: dict[str, Any] | None, width: int) -> list[str]:
    """The groups of trials and, figure by figure, the verdict between them."""
    if not trials:
        return []
    if trials["note"]:
        return ["", textwrap.fill(trials["note"], width)]
    lines = ["", "Trials (median [min to max], the median's 95% interval from 6 trials):"]
    for g in trials["groups"]:
        out = "".join(f"; run {w['run_id']} left out: {w['why']}"
                      for w in g.get("left_out_why") or [])
        lines.append(f"  {g['label']}: runs {', '.join(map(str, g['run_ids']))}{out}")
        if len(g["run_ids"]) > 1:
            lines += [f"    {label_of(key)}: {describe(key, s, format_value)}"
                      for key, s in g["figures"].items() if s is not None]
        if g.get("capacity"):
            lines.append(textwrap.fill(g["capacity"]["text"], width, initial_indent="    ",
                                       subsequent_indent="      "))
    if trials["differences"]:
        lines.append("The groups compared, figure by figure:")
        lines.append(textwrap.fill(trials["method"], width, initial_indent="  ",
                                   subsequent_indent="  "))
    for d in trials["differences"]:
        lines += [textwrap.fill(f["text"], width, initial_indent="  - ",
                                subsequent_indent="    ")
                  for f in d["figures"].values()]
        lines.append(textwrap.fill(d["chance"], width, initial_indent="  ",
                                   subsequent_indent="  "))
    return lines


def _not_measured(entry: dict[str, Any], reasons: dict[str, str]) -> list[str]:
    """Why a run's figures are n/a: its error once, then each figure's own reason."""
    lines = [f"  {label(entry)} failed: {entry['error']}"] if entry.get("error") else []
    if len(reasons) == len(FIGURE_KEYS) and len(set(reasons.values())) == 1:
        return lines + [f"  {label(entry)}: no figure, because {next(iter(reasons.values()))}"]
    return lines + [f"  {label(entry)}, {label_of(key)}: {reason}"
                    for key, reason in reasons.items()
                    if not reason.startswith("the run failed: ")]
