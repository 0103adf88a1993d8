"""A silent corruption's figures, from what its actions recorded: what was corrupted, when and
by what the system detected it and repaired it, and the corrupt reads clients saw.

The corruption action's output is the `fault_injected` event; the watch's (actions.corrupt.
detect_and_repair) is an `activity` event. Times are seconds from the watch's start, which
follows the corruption at once (t_fault). Corrupt reads are the watch's reads of the object
through the client API whose bytes differed from what was written, beside the verify
phase's count over the load's own objects.
"""

from __future__ import annotations

from typing import Any

from service.store.models import Run

KEYS = ("mode", "asked", "detected_after_s", "detected_by", "repaired_after_s", "repaired_by",
        "confirmed", "reads", "corrupt_reads", "corrupt_reads_flagged", "unreadable_reads",
        "first_corrupt_read_s", "reasons")


def corruption_figures(run: Run) -> dict[str, Any] | None:
    """The corruption's figures, or None for a run that corrupted nothing."""
    injected = next((e.detail.get("output") for e in run.events if e.kind == "fault_injected"
                     and isinstance(e.detail.get("output"), dict)
                     and "md5_corrupted" in e.detail["output"]), None)
    if injected is None:
        return None
    watched = next((e.detail["output"] for e in run.events if e.kind == "activity"
                    and isinstance(e.detail.get("output"), dict)
                    and "detected_after_s" in e.detail["output"]), None)
    out: dict[str, Any] = {"corrupted": injected.get("corrupted"),
                           "replica": injected.get("replica"),
                           "verify_corrupt_objects": (run.verify or {}).get("corrupt_objects")}
    if watched is None:
        return {**out, "reasons": {"detected_after_s": "the run did not watch for detection"}}
    return {**out, **{key: watched.get(key) for key in KEYS}}


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} s"


def corruption_lines(figures: dict[str, Any] | None) -> list[str]:
    """What happened, one line each: the corruption, its detection, its repair, the reads."""
    if not figures:
        return []
    reasons = figures.get("reasons") or {}
    asked = f" (asked: {', '.join(figures['asked'])})" if figures.get("asked") else ""
    lines = [f"corrupted: {figures['corrupted']}"]
    if figures.get("detected_after_s") is not None:
        lines.append(f"detected after {_seconds(figures['detected_after_s'])} by "
                     f"{figures['detected_by']}{asked}")
    else:
        lines.append(f"not detected: {reasons.get('detected_after_s', 'n/a')}{asked}")
    if figures.get("repaired_after_s") is not None:
        confirmed = f"; {figures['confirmed']}" if figures.get("confirmed") else ""
        lines.append(f"repaired after {_seconds(figures['repaired_after_s'])} by "
                     f"{figures['repaired_by']}{confirmed}")
    else:
        lines.append(f"not repaired: {reasons.get('repaired_after_s', 'n/a')}")
    if figures.get("reads") is not None:
        flagged = figures.get("corrupt_reads_flagged") or 0
        given_away = (f", {flagged} of them with an ETag that did not match the body (a client "
                      "that checks it would refuse them)") if flagged else ""
        first = (f", the first after {_seconds(figures['first_corrupt_read_s'])}"
                 if figures.get("first_corrupt_read_s") is not None else "")
        lines.append(f"corrupt reads seen by clients: {figures['corrupt_reads']} of "
                     f"{figures['reads']} reads of the object{first}{given_away}"
                     + (f"; {figures['unreadable_reads']} unreadable"
                        if figures.get("unreadable_reads") else ""))
    verify = figures.get("verify_corrupt_objects")
    lines.append("verify phase: " + ("n/a" if verify is None else
                                     f"{verify} corrupt objects of the load's own"))
    return lines
