"""The lab suite in two streams that run side by side (scripts/test_lab_streams.py).

Most of a lab test's time is waiting for a cluster to notice, recover or replicate: the
suite alone kept about 0.7 of this machine's two cores busy. So the tests of the Reef lab and
those of the Swift lab alone run in a side stream, beside the main stream's Ceph lab, each
stream with a database of its own. A lab belongs to one stream at a time: the main stream
runs the tests that need the Swift lab too (the monitoring stack, the guard on both labs)
last, and its Swift lab waits until the side stream is over (SIDE_DONE names the file the
stream runner writes then). `--stream all`, the default, is the suite in one process.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from clusters.paths import state_dir
from clusters.polling import poll_until

SIDE_DONE = "FAULTLINE_SIDE_STREAM_DONE"
SIDE_WAIT_S = 3600
# tests that need the Swift or the Reef lab and nothing else (their system is a parameter:
# the Ceph cases stay in the main stream)
SIDE_MODULES = frozenset({
    "test_ceph_reef_bmc", "test_ceph_reef_lab", "test_recovery_tuning", "test_bad_input_swift",
    "test_swift_kill_object_server", "test_swift_replication_probe", "test_swift_scale_out",
    "test_planted_consistency", "test_swift_current_lab",
    # and some that need no lab at all (the API and pages on stored data, a made-up
    # inventory), to even the streams out; the CPU-heavy fuzzing and Chromium stay in the
    # main stream, so that the two together do not crowd the labs
    "test_api_auth", "test_api_openapi", "test_api_experiments", "test_compare_web",
    "test_dashboard_pages", "test_dashboard_charts", "test_dashboard_schedules",
    "test_auth_web", "test_hostile_sessions", "test_recovery_study_web"})
SIDE_PARAMETRIZED = frozenset({"test_fault_catalogue", "test_fault_catalogue_corruption",
                               "test_s3_driver", "test_list_head", "test_recovery_settings"})


def _swift_case(item: pytest.Item) -> bool:
    """A parametrized test's Swift case (its lab comes from request.getfixturevalue)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return "swift" in (params.get("system"), params.get("lab"))


def in_side_stream(item: pytest.Item) -> bool:
    if set(item.fixturenames) & {"ceph_cluster", "stack"}:
        return False
    module = item.module.__name__.rpartition(".")[2]
    return module in SIDE_MODULES or (module in SIDE_PARAMETRIZED and _swift_case(item))


def needs_swift(item: pytest.Item) -> bool:
    """Asks for the Swift lab, by fixture or by its parameter."""
    return bool(set(item.fixturenames) & {"swift_cluster", "stack"}) or _swift_case(item)


def select_stream(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the stream's items (in place); the main stream's Swift ones go last."""
    stream = config.getoption("stream")
    if stream == "all":
        return
    keep = [i for i in items if in_side_stream(i) == (stream == "side")]
    dropped = [i for i in items if i not in keep]
    if stream == "main":
        keep.sort(key=needs_swift)  # stable: the order within each part is kept
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def wait_for_side_stream(config: pytest.Config) -> None:
    """In the main stream, before its Swift lab comes up: until the side stream is over."""
    if config.getoption("stream") != "main" or not os.environ.get(SIDE_DONE):
        return
    done = Path(os.environ[SIDE_DONE])
    poll_until("the side stream to end", done.exists, SIDE_WAIT_S)


@contextmanager
def lab_changes() -> Iterator[None]:
    """One lab up or down at a time across both streams: `lab up` writes the machine's
    inventory and takes loop devices, neither of which two processes may do at once."""
    path = state_dir() / ".lab-fixtures.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as lock:  # closing it releases the lock
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
