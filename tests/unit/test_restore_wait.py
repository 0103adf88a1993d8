"""How long a run's end waits for daemons a restore started (service.runs.restore_checks)."""

from __future__ import annotations

import time
from types import SimpleNamespace

from service.runs.restore_checks import wait_for_daemons_back

STILL_DOWN = SimpleNamespace(latest={"down": 1})  # what the sampler last saw


def waited(journal: dict | None, restore_ts: float | None, sampler=STILL_DOWN) -> float:
    began = time.monotonic()
    wait_for_daemons_back(journal, sampler, restore_ts, timeout_s=1.0)
    return time.monotonic() - began


def test_a_run_that_restored_nothing_does_not_wait_for_what_it_left_down():
    assert waited({"rollbacks": []}, None) < 0.5
    assert waited(None, None) < 0.5


def test_a_restore_or_a_successful_rollback_gives_the_daemon_time_to_be_counted_up():
    assert waited({"rollbacks": []}, restore_ts=100.0) >= 1.0
    assert waited({"rollbacks": [{"status": "succeeded"}]}, None) >= 1.0


def test_a_failed_rollback_is_not_waited_for_and_an_up_cluster_needs_no_wait():
    assert waited({"rollbacks": [{"status": "failed"}]}, 100.0) < 0.5
    assert waited({"rollbacks": []}, 100.0, SimpleNamespace(latest={"down": 0})) < 0.5
