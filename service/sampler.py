"""Sample the cluster's own view of itself once a second, for the whole run.

Ceph: the mon's `status` through python-rados (health, OSDs up/in, PG states,
degraded and misplaced objects). The mgr prometheus module lags 9-19 s, too
slow for recovery timing, so it is not used here.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from clusters.ceph_admin import CephAdmin
from clusters.exceptions import ClusterError
from clusters.inventory import Cluster

log = logging.getLogger(__name__)

Sink = Callable[[list[tuple[float, str, dict[str, Any]]]], None]


class ClusterSampler:
    def __init__(self, cluster: Cluster, sink: Sink, interval_s: float = 1.0,
                 flush_every_s: float = 3.0):
        if cluster.kind != "ceph":
            raise ValueError(f"no sampler for a {cluster.kind} cluster yet")
        self.cluster = cluster
        self.sink = sink
        self.interval_s = interval_s
        self.flush_every_s = flush_every_s
        self.latest: dict[str, Any] | None = None
        self._pending: list[tuple[float, str, dict[str, Any]]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._admin = CephAdmin.for_cluster(cluster, timeout=5)

    def start(self) -> None:
        self._admin.connect()
        self._thread = threading.Thread(target=self._run, name="faultline-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._flush()
        self._admin.close()

    def _run(self) -> None:
        next_at = time.monotonic()
        last_flush = next_at
        while not self._stop.is_set():
            before = time.time()
            try:
                state = self._admin.state().as_dict()
                health = state["health"]
            except ClusterError as exc:
                state, health = {"error": str(exc)}, "UNREACHABLE"
            except Exception as exc:  # an odd reply must not end the sampling
                log.exception("cluster sample failed")
                state, health = {"error": f"{type(exc).__name__}: {exc}"}, "UNKNOWN"
            ts = (before + time.time()) / 2
            self.latest = {"ts": ts, **state}
            self._pending.append((ts, health, state))
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
