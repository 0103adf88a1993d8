"""Sample the cluster's own view of itself once a second, for the whole run.

Ceph: the mon's `status` through python-rados (health, OSDs up/in, PG states,
degraded and misplaced objects). The mgr prometheus module lags 9-19 s, too
slow for recovery timing, so it is not used here.

Swift: recon and healthchecks of every storage server once a second. The
dispersion report (about a second of CPU) and the handoff partitions of every
device (listed over SSH: polled each second, that alone kept 0.8 of the lab
machine's two cores busy) run in their own thread: a listing, a report, then a pause of up
to 10 s, a new round every 15-25 s in the demo's Swift runs; each sample carries the latest
finished ones.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from clusters.access.inventory import Cluster
from clusters.ceph.admin import CephAdmin
from clusters.exceptions import ClusterError
from clusters.polling import PollTimeout, poll_until
from clusters.swift.admin import DISPERSION_TIMEOUT_S, SwiftAdmin, poll_pause
from clusters.swift.state import Dispersion

log = logging.getLogger(__name__)

Sink = Callable[[list[tuple[float, str, dict[str, Any]]]], None]


class StateSource(Protocol):
    def connect(self) -> None: ...
    def state(self) -> dict[str, Any]: ...
    def observed_since(self, since: float, timeout_s: float) -> bool: ...
    def close(self) -> None: ...


class CephSource:
    def __init__(self, cluster: Cluster):
        self._admin = CephAdmin.for_cluster(cluster, timeout=5)

    def connect(self) -> None:
        self._admin.connect()

    def state(self) -> dict[str, Any]:
        return self._admin.state().as_dict()

    def observed_since(self, since: float, timeout_s: float) -> bool:
        return True  # every state() asks the mon afresh

    def close(self) -> None:
        self._admin.close()


class SwiftSource:
    # between two rounds, poll_pause's (the observer must not take a core from the cluster
    # it observes), at most 10 s, and 1 s after a failed report: in make demo's busiest
    # minutes a report took 13 s, then timed out at 30 s, and a pause of twice that left
    # the run without a dispersion figure for minutes
    DISPERSION_PAUSE_S = 1.0
    DISPERSION_MAX_PAUSE_S = 10.0

    def __init__(self, cluster: Cluster):
        self._admin = SwiftAdmin(cluster, timeout=2.0)
        self._dispersion: Dispersion | None = None
        self._handoffs: dict[str, int] | None = None
        self._dispersion_error: str | None = None  # why the latest report failed, if it did
        # the rings the two slow figures were taken against: after a ring push they are
        # unknown until taken again (a pre-push "no handoff, 100%" would pass for done)
        self._slow_stamp: tuple = ()
        self._wake = threading.Event()  # the rings changed (or the sampler stops): now
        self._reachable = True  # per the latest recon: an SSH listing would only time out
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._round_began = float("-inf")  # when the latest finished slow round began
        self._round_done = threading.Condition()

    def connect(self) -> None:
        self._admin.ring_facts()  # a cluster whose rings cannot be read fails here
        self._thread = threading.Thread(target=self._slow_loop,
                                        name="faultline-dispersion", daemon=True)
        self._thread.start()

    def _slow_loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            stamp = self._admin.ring_stamp()
            self._handoffs = self._admin.handoffs() if self._reachable else None
            pause = self.DISPERSION_PAUSE_S
            try:
                took = time.monotonic()
                self._dispersion = self._admin.dispersion(timeout_s=DISPERSION_TIMEOUT_S)
                self._dispersion_error = None
                log.debug(f"Swift dispersion report in {time.monotonic() - took:.1f} s")
                pause = poll_pause(time.monotonic() - started, pause,
                                   self.DISPERSION_MAX_PAUSE_S)
            except ClusterError as exc:  # e.g. the proxy is the fault: no report
                if self._stop.is_set():  # close() cancelled it: nothing to say
                    break
                # said once when the reports stop, not at every retry
                (log.warning if self._dispersion is not None else log.debug)(
                    f"no Swift dispersion report: {exc}")
                self._dispersion = None
                self._dispersion_error = str(exc)
            self._slow_stamp = stamp
            with self._round_done:
                self._round_began = started
                self._round_done.notify_all()
            self._wake.wait(pause)
            self._wake.clear()

    def observed_since(self, since: float, timeout_s: float) -> bool:
        """Wait until a slow round (the handoff listing, then the dispersion report) that
        began at or after `since` (time.monotonic()) has finished, cutting the loop's pause
        short; False after timeout_s."""
        with self._round_done:
            if self._round_began >= since:
                return True
            self._wake.set()
            return self._round_done.wait_for(
                lambda: self._round_began >= since or self._stop.is_set(), timeout_s) \
                and self._round_began >= since

    def state(self) -> dict[str, Any]:
        current = self._admin.ring_stamp() == self._slow_stamp
        if not current:
            self._wake.set()
        state = self._admin.state(dispersion=self._dispersion if current else None,
                                  handoffs=self._handoffs if current else None)
        self._reachable = all(n.reachable for n in state.nodes)
        return {**state.as_dict(), "dispersion_error": self._dispersion_error}

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._admin.cancel()  # a report in progress would hold the stop up to its timeout
        if self._thread is not None:
            self._thread.join()
        self._admin.close()


def state_source(cluster: Cluster) -> StateSource:
    if cluster.kind == "ceph":
        return CephSource(cluster)
    if cluster.kind == "swift":
        return SwiftSource(cluster)
    raise ClusterError(f"no cluster sampler for a {cluster.kind} cluster ({cluster.name})")


class ClusterSampler:
    def __init__(self, cluster: Cluster, sink: Sink, interval_s: float = 1.0,
                 flush_every_s: float = 3.0):
        self.cluster = cluster
        self.sink = sink
        self.interval_s = interval_s
        self.flush_every_s = flush_every_s
        self.latest: dict[str, Any] | None = None
        self.samples_taken = 0
        # the last hour in memory: the run judges its baseline from it before the fault
        self.recent: deque[tuple[float, str, dict[str, Any]]] = deque(maxlen=3600)
        self._pending: list[tuple[float, str, dict[str, Any]]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._source = state_source(cluster)

    def start(self) -> None:
        self._source.connect()
        self._thread = threading.Thread(target=self._run, name="faultline-sampler", daemon=True)
        self._thread.start()

    def observed_since(self, since: float, timeout_s: float) -> bool:
        """Whether a sample now carries what the source saw at or after `since`
        (time.monotonic()): Swift's slower figures are older than the sample that carries
        them. Waits for that round, then for two more samples (the first may have begun
        before the round ended); False after timeout_s."""
        if not self._source.observed_since(since, timeout_s):
            return False
        wanted = self.samples_taken + 2
        try:
            poll_until("two more cluster samples",
                       lambda: self.samples_taken >= wanted or self._stop.is_set(),
                       3 * self.interval_s + 5, 0.05)
        except PollTimeout:
            return False
        return self.samples_taken >= wanted

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._flush()
        self._source.close()

    def _run(self) -> None:
        next_at = time.monotonic()
        last_flush = next_at
        while not self._stop.is_set():
            before = time.time()
            try:
                state = self._source.state()
                health = state["health"]
            except ClusterError as exc:
                state, health = {"error": str(exc)}, "UNREACHABLE"
            except Exception as exc:  # an odd reply must not end the sampling
                log.exception("cluster sample failed")
                state, health = {"error": f"{type(exc).__name__}: {exc}"}, "UNKNOWN"
            ts = (before + time.time()) / 2
            self.latest = {"ts": ts, **state}
            self.samples_taken += 1
            self._pending.append((ts, health, state))
            self.recent.append((ts, health, state))
            if time.monotonic() - last_flush >= self.flush_every_s:
                self._flush()
                last_flush = time.monotonic()
            next_at += self.interval_s
            self._stop.wait(max(0.0, next_at - time.monotonic()))

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if not pending:
            return
        try:
            self.sink(pending)
        except Exception:  # e.g. the database restarting: keep the rows for the next flush
            log.exception(f"could not store {len(pending)} cluster samples; will retry")
            self._pending = pending + self._pending
