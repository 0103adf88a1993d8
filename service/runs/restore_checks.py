"""Whether a run's fault was undone: every rollback succeeded and no daemon is still down
when the run ends. A run that fails this is marked failed, "FAULT NOT RESTORED", however
good its figures (service.runs.final_status)."""

from __future__ import annotations

import logging

from clusters.polling import PollTimeout, poll_until
from service.store.recording import RunRecorder

from .sampler import ClusterSampler

logger = logging.getLogger("chaostoolkit")


def wait_for_daemons_back(journal: dict | None, sampler: ClusterSampler,
                          restore_ts: float | None, timeout_s: float = 30.0) -> None:
    """A restore that starts a daemon returns before the cluster counts it up (an OSD
    boots for a few seconds; seen in CI with a 1 s tail): if every rollback succeeded,
    give the cluster that long before `unrestored` judges what is still down. A run that
    played no restore and no rollback has nothing to wait for: a daemon it left down stays
    down, and waiting only delayed its "FAULT NOT RESTORED" by 30 s."""
    rollbacks = (journal or {}).get("rollbacks", [])
    if any(r.get("status") != "succeeded" for r in rollbacks):
        return
    if restore_ts is None and not rollbacks:
        return
    try:
        poll_until("the restored daemons to be counted up",
                   lambda: not (sampler.latest or {}).get("down"), timeout_s, 1.0)
    except PollTimeout:
        pass  # `unrestored` says what is still down


def wait_for_a_view_since(sampler: ClusterSampler | None, since: float,
                          timeout_s: float = 30.0) -> None:
    """Keep the run (and its load) on until the sampler has seen the cluster as it was at
    or after `since` (time.monotonic()), at most timeout_s. Swift's handoff listing and
    dispersion report come every 15-25 s: a run whose tail ended first kept the older
    figures, and its time to full redundancy after the restore read "not fully redundant
    before the run ended" though its probes had seen replication caught up (make demo, 5 s
    tails)."""
    if sampler is not None and not sampler.observed_since(since, timeout_s):
        logger.warning(f"the cluster's slower figures (Swift: the handoff listing and the "
                       f"dispersion report) were not taken again within {timeout_s:.0f} s "
                       "of the experiment's end: the last ones are older")


def unrestored(journal: dict | None, sampler: ClusterSampler | None,
               recorder: RunRecorder) -> str | None:
    """Say loudly if a rollback failed or the cluster was left with daemons down: the
    message, recorded as a `restore_failed` event; None when all was restored."""
    failed = [r.get("activity", {}).get("name") for r in (journal or {}).get("rollbacks", [])
              if r.get("status") != "succeeded"]
    state = (sampler.latest or {}) if sampler else {}
    down = state.get("down") or 0
    problems = []
    if failed:
        problems.append(f"rollback {', '.join(map(str, failed))} failed")
    if down > 0:
        problems.append(f"still down at the end of the run: {state.get('summary')} "
                        "(see `faultline lab status`)")
    if not problems:
        return None
    message = "FAULT NOT RESTORED: " + "; ".join(problems)
    logger.critical(message)
    recorder.event("restore_failed", problems=problems)
    return message
