"""The run's progress line, logged every few seconds while the load runs."""

from __future__ import annotations

from typing import Any


def progress_line(run_id: int | None, now: float, load_started: float, fault_ts: float | None,
                  load_ended: bool, last_second: dict[str, float],
                  state: dict[str, Any]) -> str:
    """"[run 7 +15s after fault] load 64 ops/s, 0 errors | HEALTH_WARN ...": where the run
    is, what the clients got in the last whole second, and what the cluster says."""
    since = f"+{now - fault_ts:.0f}s after fault" if fault_ts \
        else f"{now - load_started:.0f}s into load"
    load = "load ended" if load_ended else (f"load {last_second.get('ops', 0):.0f} ops/s, "
                                            f"{last_second.get('errors', 0):.0f} errors")
    cluster = state.get("summary") or state.get("error") or "no cluster sample yet"
    return f"[run {run_id} {since}] {load} | {cluster}"
