"""A worker's side of one run: start its process, pass a cancel on, settle its row.

The run itself happens in `python -m service.runs.runner RUN_ID` (service.runs.runner).
Cancelling sends it SIGUSR1, which Chaos Toolkit turns into a graceful exit:
the method stops, the rollbacks run, the control records the run as
interrupted. Whatever the process leaves unsaid (it died, it never started) is
written on the run's row here.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from procrastinate.exceptions import JobAborted
from sqlalchemy import update

from clusters.paths import state_dir
from service.store import db
from service.store.models import Event, Run

from . import reaper
from .environment import process_environment


def log_path(run_id: int) -> Path:
    """Where the run's process writes its log (the Chaos Toolkit narration)."""
    return state_dir() / "run-logs" / f"{run_id}.log"


async def supervise(run_id: int, url: str, should_abort: Callable[[], bool],
                    poll_s: float = 1.0) -> str:
    """Run it to the end; JobAborted if it was cancelled."""
    path = log_path(run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as log:
        # its own session: a Ctrl-C meant for the worker must not hit the run mid-fault
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "service.runs.runner", str(run_id),
            env=process_environment(url), stdout=log, stderr=log,
            start_new_session=True)
    interrupted = False
    while not interrupted:
        try:
            code = await asyncio.wait_for(process.wait(), timeout=poll_s)
            break
        except TimeoutError:
            interrupted = should_abort()
        except asyncio.CancelledError:
            # procrastinate aborts an async job by cancelling its task: the run must still
            # be stopped the graceful way, and waited for, rollbacks and all
            asyncio.current_task().uncancel()
            interrupted = True
    if interrupted:
        await asyncio.to_thread(_record_cancel, url, run_id)
        process.send_signal(signal.SIGUSR1)  # once: a second would cut the rollbacks short
        code = await _wait_for_end(process)
    status = await asyncio.to_thread(settle, url, run_id, code, interrupted)
    if interrupted:
        raise JobAborted(f"run {run_id} was cancelled: {status}")
    return status


async def _wait_for_end(process: asyncio.subprocess.Process) -> int:
    """Wait for the run's process, whatever else asks this job to stop meanwhile."""
    while True:
        try:
            return await asyncio.shield(process.wait())
        except asyncio.CancelledError:
            asyncio.current_task().uncancel()


def _record_cancel(url: str, run_id: int) -> None:
    with db.session_factory(url).begin() as session:
        session.add(Event(run_id=run_id, ts=time.time(), kind="cancel_requested", detail={}))


def settle(url: str, run_id: int, exit_code: int, interrupted: bool) -> str:
    """The run's final status once its process is gone: a run it left running (killed, or
    crashed, before the control could finish it) is interrupted (service.runs.reaper)."""
    sessions = db.session_factory(url)
    reaper.interrupt_run(sessions, run_id, _how_it_ended(exit_code), "the worker that ran it")
    with sessions.begin() as session:
        run = session.get(Run, run_id)
        if run is None:
            return "missing"
        if run.status == "queued":  # cancelled (or dead) before the control took it over
            values = ({"status": "cancelled"} if interrupted else
                      {"status": "failed", "error": f"the run's process exited with code "
                                                    f"{exit_code} before the run started"})
            session.execute(update(Run).where(Run.id == run_id)
                            .values(ended_at=datetime.now(UTC), **values))
        session.flush()
        session.refresh(run)
        return run.status


def _how_it_ended(exit_code: int) -> str:
    if exit_code < 0:
        try:
            return f"was killed by {signal.Signals(-exit_code).name}"
        except ValueError:
            return f"was killed by signal {-exit_code}"
    return f"exited with code {exit_code} before the run ended"
