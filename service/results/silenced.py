"""The caveat of a run whose abort alerts were silenced in Alertmanager as it started (the
`abort_alerts_silenced` event that service.runs.silences records), in words."""

from __future__ import annotations

from typing import Any

from service.store.models import Run

EVENT = "abort_alerts_silenced"


def silenced_note(run: Run) -> list[str]:
    """The run's silenced-alert caveats, one line each."""
    return [line for e in run.events if e.kind == EVENT for line in notes(e.detail or {})]


def notes(detail: dict[str, Any]) -> list[str]:
    """The caveat lines of an `abort_alerts_silenced` event."""
    if detail.get("unchecked"):
        return [f"abort alerts not checked for silences: {detail['unchecked']}"]
    return [f"abort alert {s['condition']} {'is' if s['certain'] else 'may be'} silenced in "
            f"Alertmanager (silence {s['silence_id']}, {', '.join(s['matchers'])}, by "
            f"{s['created_by']}, until {s['ends_at']}): the run would not abort on it"
            for s in detail.get("silences") or []]
