"""How a timeline event reads: its kind (as stored, and as the JSON API keeps it) in words.

The run page, its downloadable report and the API's events show these labels beside
(never instead of) the kinds the recorders write (service.runs.control, the reaper,
the auto-heal, the alert webhook), so a reader sees "cluster noticed the fault", not
`cluster_noticed`.
"""

from __future__ import annotations

EVENT_LABELS = {
    # before the fault
    "rate_resolved": "rate set from the calibrated capacity",
    "topology_note": "topology checked",
    "drivers_ready": "load drivers ready",
    "prefilled": "objects written before the load",
    "load_started": "load started",
    "baseline_started": "baseline started",
    "baseline_judged": "baseline judged",
    "baseline_extended": "baseline extended (not yet steady)",
    "capacity_measured": "capacity measured",
    "abort_alerts_silenced": "abort alerts found silenced",
    # the experiment's steps and the fault
    "activity": "experiment step",
    "fault_started": "fault action started",
    "fault_injected": "fault injected",
    "fault_failed": "fault action failed",
    "daemon_restarted": "daemon restarted by its supervisor",
    "intent_not_kept": "fault intent not kept",
    "restored": "fault restored",
    "restore_failed": "restore failed",
    # what the figures put on the timeline (service.results.figures.milestones)
    "cluster_noticed": "cluster noticed the fault",
    "client_recovered": "clients recovered",
    "fully_redundant": "fully redundant again",
    # the run's end and what came from outside it
    "load_ended": "load ended",
    "alert": "alert fired",
    "abort_requested": "abort requested",
    "cancel_requested": "cancel requested",
    "interrupted": "run interrupted",
    "healed": "left-over fault healed",
    "heal_failed": "heal of a left-over fault failed",
}


def event_label(kind: str) -> str:
    """The event's label; a kind without one (a newer recorder's) reads as its words."""
    return EVENT_LABELS.get(kind, kind.replace("_", " "))
