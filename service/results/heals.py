"""The heals of a run's faults after it ended (a worker's auto-heal restoring what a run whose
process died left, service.runs.orphan_heal), as its report shows them: from its `healed` and
`heal_failed` events."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from service.store.models import Run

KINDS = ("healed", "heal_failed")


def heals(run: Run) -> list[dict[str, Any]]:
    """Each heal, oldest first: the fault, whether it was restored, by whom, when (ISO), why
    it failed."""
    return [{"fault": e.detail.get("name"), "key": e.detail.get("key"),
             "restored": e.kind == "healed", "by": e.detail.get("by"),
             "worker": e.detail.get("worker"), "at": _iso(e.ts), "error": e.detail.get("error")}
            for e in sorted(run.events, key=lambda e: e.ts) if e.kind in KINDS]


def heal_lines(heals: list[dict[str, Any]]) -> list[str]:
    """One line each, for a terminal."""
    lines = []
    for h in heals:
        who = h["by"] + (f" ({h['worker']})" if h.get("worker") else "")
        when = h["at"][:19].replace("T", " ") + " UTC"
        if h["restored"]:
            lines.append(f"healed: {h['fault']}, restored by {who} at {when}")
        else:
            lines.append(f"heal FAILED: {h['fault']}, tried by {who} at {when}: {h['error']}; "
                         "it is still in the fault ledger")
    return lines


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()
