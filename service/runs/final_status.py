"""A run's final status and error, from what the run recorded. Pure.

In order, the first that applies:
- a restore that failed, or a daemon still down at the end: `failed`, "FAULT NOT RESTORED";
- a baseline that did not hold, so nothing was injected: `invalid`, with the verdict;
- any other error (the load failed, verify failed): `failed`;
- a daemon meant to stay down that came back (its supervisor, an operator): `invalid`, as
  what was measured is not what the experiment asked for, whatever the figures say;
- a fault action that said it did not take: `invalid`;
- an abort condition that stopped the run on purpose (rollbacks run): `interrupted`;
- else the experiment's own status: `completed`, `deviated` (a hypothesis failed) or
  `failed`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Ending:
    journal_status: str | None  # Chaos Toolkit's, None without a journal
    deviated: bool = False
    unrestored: str | None = None  # "FAULT NOT RESTORED: ..."
    error: str | None = None  # the load's failure, or verify's
    baseline_invalid: str | None = None  # the verdict, when nothing was injected for it
    deviations: list[str] = field(default_factory=list)
    not_taken: str | None = None
    aborted: str | None = None


def final_status(ending: Ending) -> tuple[str, str | None]:
    """(status, error) of the run."""
    if ending.unrestored:
        return "failed", ending.unrestored
    if ending.baseline_invalid:
        return "invalid", ("the baseline did not hold, nothing was injected: "
                           + ending.baseline_invalid)
    if ending.error:
        return "failed", ending.error
    if ending.deviations:
        return "invalid", "the fault's intent was not kept: " + "; ".join(ending.deviations)
    if ending.not_taken:
        return "invalid", f"the fault did not take: {ending.not_taken}"
    if ending.aborted:
        return "interrupted", ending.aborted
    if ending.deviated:
        return "deviated", None
    return ending.journal_status or "failed", None
