"""Swift health, redundancy and replication probes for Chaos Toolkit, read through recon,
dispersion reports and the rings (clusters/swift/admin.py)."""

from __future__ import annotations

import time

from chaoslib.exceptions import ActivityFailed

from clusters.access.config import cluster_from_configuration
from clusters.exceptions import ClusterError
from clusters.polling import PollTimeout, poll_until
from clusters.swift import scale_steps
from clusters.swift.admin import SwiftAdmin, poll_pause
from clusters.swift.state import SwiftState

__all__ = ["healthy", "cluster_state", "dispersion", "handoff_partitions", "replication_age",
           "recon", "wait_for_replication_caught_up", "wait_for_data_moved"]


def _admin(configuration: dict | None) -> SwiftAdmin:
    cluster = cluster_from_configuration(configuration)
    try:
        return SwiftAdmin(cluster)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def _ask(configuration: dict | None, question):
    """Ask the cluster through a SwiftAdmin; its errors fail the activity with their message."""
    try:
        with _admin(configuration) as admin:
            return question(admin)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def _state(configuration: dict | None) -> SwiftState:
    return _ask(configuration, lambda admin: admin.state())


def healthy(settle_s: float = 0, configuration: dict = None) -> bool:
    """True when every server answers, no device is unmounted, the dispersion report finds
    every copy and no partition sits on a handoff; with settle_s, True as soon as that holds
    within that many seconds (handoffs of an earlier run still draining are given the time)."""
    def holds() -> bool:
        state = _state(configuration)
        return not state.fault_seen and state.fully_redundant
    try:  # a report and an SSH listing each time: not free
        return poll_until("a healthy cluster", holds, settle_s, poll_pause)
    except PollTimeout:
        return False


def cluster_state(configuration: dict = None) -> dict:
    """Servers down, unmounted devices, dispersion, handoff partitions and replication."""
    return _state(configuration).as_dict()


def dispersion(configuration: dict = None) -> dict:
    """The dispersion report: object/container copies found of expected, objects missing
    one, two or all copies."""
    return _ask(configuration, lambda admin: admin.dispersion().as_dict())


def handoff_partitions(configuration: dict = None) -> dict:
    """Object partitions per node that sit on a device the ring does not place them on."""
    counts = _ask(configuration, lambda admin: admin.handoffs())
    if counts is None:
        raise ActivityFailed("could not list the devices of every storage node over SSH")
    return counts


def replication_age(configuration: dict = None) -> dict:
    """Seconds since each node's last completed object replication pass (None: never)."""
    nodes = _ask(configuration, lambda admin: admin.recon())
    now = time.time()
    return {n.node: None if n.replication_last is None else round(now - n.replication_last, 1)
            for n in nodes}


def recon(configuration: dict = None) -> dict:
    """Per storage node: which servers answer, unmounted devices, the last object
    replication pass (end and length), async pendings and disk usage (fraction used)."""
    nodes = _ask(configuration, lambda admin: admin.recon())
    return {n.node: {"servers_up": n.servers_up, "unmounted": list(n.unmounted),
                     "replication_last": n.replication_last,
                     "replication_seconds": n.replication_seconds,
                     "async_pending": n.async_pending, "disk_usage": n.disk_usage}
            for n in nodes}


def _passes_done(state: SwiftState, since: float) -> bool:
    """Every server answers, no handoff is left, every node passed since `since`: the
    cheap half of caught-up, read without a dispersion report."""
    started = state.oldest_pass_start
    return (not state.fault_seen and state.handoff_partitions == 0 and started is not None
            and started >= since)


def _caught_up(state: SwiftState, since: float) -> bool:
    return _passes_done(state, since) and state.fully_redundant


def wait_for_replication_caught_up(timeout_s: float = 600, configuration: dict = None) -> dict:
    """Wait until replication has caught up after a restore: every server answers, the
    dispersion report finds 100% of the copies, no handoff partition is left, and every
    node completed an object replication pass that started after this probe began (a pass
    that began before the restore may have skipped the restored server). Fails after
    timeout_s with the last state seen."""
    since = time.time()
    last: SwiftState | None = None

    def not_caught_up(_) -> str:
        seen = "nothing" if last is None else last.summary()
        pass_start = last.oldest_pass_start if last else None
        passes = ("no replication pass completed since the wait began" if not pass_start
                  or pass_start < since else "replication passes completed")
        return (f"Swift replication not caught up within {timeout_s:.0f} s "
                f"(last seen: {seen}; {passes})")

    try:
        with _admin(configuration) as admin:
            def caught_up() -> dict | None:
                nonlocal last
                # the dispersion report costs a second of CPU on the cluster's machines:
                # only once recon and the devices say the rest is done
                last = admin.state(dispersion=False)
                if _passes_done(last, since):
                    last = admin.state()
                return ({"waited_s": round(time.time() - since, 1), **last.as_dict()}
                        if _caught_up(last, since) else None)
            # SSH listings are not free: poll_pause
            return poll_until("Swift replication caught up", caught_up, timeout_s,
                              poll_pause, error=ActivityFailed, message=not_caught_up)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def wait_for_data_moved(timeout_s: float = 600, configuration: dict = None) -> dict:
    """Wait until replication has moved the data a ring change reassigned (after
    actions.swift.add_device): no partition left on a handoff (a device that lost it), every
    server answers, the dispersion report finds 100%. Returns moved_s, the seconds from the
    last ring push (the newest ring file's time) until then; fails after timeout_s."""
    try:
        cluster = cluster_from_configuration(configuration)
        pushed = scale_steps.last_push(cluster)
        return scale_steps.wait_until_moved(cluster, pushed, timeout_s)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None
