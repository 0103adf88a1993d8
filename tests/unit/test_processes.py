"""A process known by its PID, host and start: alive, gone, its PID reused, its host
rebooted, or out of sight (another host or PID namespace)."""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

from clusters.processes import (
    ALIVE,
    ELSEWHERE,
    GONE,
    REBOOTED,
    REUSED,
    ProcessOwner,
    start_of,
)


@pytest.fixture
def sleeper():
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()  # reaped: the PID runs nothing any more
    return process.pid


def here(pid: int, start: str | None) -> ProcessOwner:
    return ProcessOwner(pid, socket.gethostname(), start)


def test_this_process_is_alive_with_its_own_start():
    me = ProcessOwner.current()

    assert (me.pid, me.host) == (os.getpid(), socket.gethostname())
    assert me.start is not None and me.state() == ALIVE and me.alive() is True


def test_a_live_process_with_its_start_is_alive(sleeper):
    assert here(sleeper.pid, start_of(sleeper.pid)).state() == ALIVE


def test_a_pid_that_runs_nothing_is_gone():
    pid = dead_pid()

    assert here(pid, None).state() == GONE
    assert start_of(pid) is None


def test_a_zombie_is_gone():
    zombie = subprocess.Popen(["true"])
    try:
        deadline = time.monotonic() + 5
        while here(zombie.pid, None).state() != GONE:  # not waited for: a zombie
            assert time.monotonic() < deadline, f"pid {zombie.pid} not a zombie after 5 s"
            time.sleep(0.01)
    finally:
        zombie.wait()


def test_a_pid_that_now_runs_a_process_started_at_another_time_was_reused(sleeper):
    boot, namespace, ticks = start_of(sleeper.pid).split(" ")
    owner = here(sleeper.pid, f"{boot} {namespace} {int(ticks) - 1}")

    assert owner.state() == REUSED and owner.alive() is False


def test_without_its_start_a_reused_pid_counts_as_alive(sleeper):
    assert here(sleeper.pid, None).alive() is True  # the fault ledger's safe mistake


def test_an_owner_from_before_a_reboot_is_dead(sleeper):
    _, namespace, ticks = start_of(sleeper.pid).split(" ")
    owner = here(sleeper.pid, f"00000000-0000-0000-0000-000000000000 {namespace} {ticks}")

    assert owner.state() == REBOOTED and owner.alive() is False


def test_an_owner_in_another_pid_namespace_cannot_be_judged(sleeper):
    boot, _, ticks = start_of(sleeper.pid).split(" ")
    owner = here(sleeper.pid, f"{boot} pid:[1] {ticks}")

    assert owner.state() == ELSEWHERE and owner.alive() is None


def test_an_owner_on_another_host_cannot_be_judged():
    owner = ProcessOwner(os.getpid(), "elsewhere.example", start_of(os.getpid()))

    assert owner.state() == ELSEWHERE and owner.alive() is None
