"""Helpers of the fault-catalogue tests: acknowledged writes read back, waits with deadlines."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import rados

from clusters.access.credentials import swift_credentials
from clusters.access.http import request as _http
from clusters.access.inventory import Cluster
from clusters.ceph.admin import CephAdmin
from clusters.paths import default_inventory
from clusters.swift.admin import SwiftAdmin

REPO = Path(__file__).resolve().parents[2]


def content(name: str) -> bytes:
    return hashlib.sha256(name.encode()).digest() * 128  # 4 KiB, derived from the name


class CephObjects:
    """Writes to the lab pool, in a namespace of its own; remembers what was acknowledged."""

    def __init__(self, cluster: Cluster):
        self.admin = CephAdmin.for_cluster(cluster, timeout=30)
        self.admin.connect()
        self.ioctx = self.admin.rados.open_ioctx(cluster.client["pool"])
        self.ioctx.set_namespace(f"catalogue-{uuid.uuid4().hex[:8]}")
        self.acked: list[str] = []
        self.refused: Counter[str] = Counter()

    def write(self, count: int) -> None:
        for _ in range(count):
            name = uuid.uuid4().hex
            try:
                self.ioctx.write_full(name, content(name))
            except rados.Error as exc:  # not acknowledged: not owed
                self.refused[type(exc).__name__] += 1
                continue
            self.acked.append(name)

    def lost(self) -> list[str]:
        return [n for n in self.acked if self.ioctx.read(n, 8192) != content(n)]

    def close(self) -> None:
        for name in self.acked:
            self.ioctx.remove_object(name)
        self.ioctx.close()
        self.admin.close()


class SwiftObjects:
    """Writes through the proxy into a container of its own."""

    def __init__(self, cluster: Cluster):
        creds = swift_credentials(cluster)
        _, headers, _ = _http(creds.auth_url, "GET",
                              {"X-Auth-User": creds.user, "X-Auth-Key": creds.key})
        self.auth = {"X-Auth-Token": headers["x-auth-token"]}
        self.container = f"{headers['x-storage-url']}/catalogue-{uuid.uuid4().hex[:8]}"
        assert _http(self.container, "PUT", self.auth)[0] in (201, 202)
        self.acked: list[str] = []
        self.refused: Counter[int] = Counter()  # statuses of writes not acknowledged

    def write(self, count: int) -> None:
        for _ in range(count):
            name = uuid.uuid4().hex
            status, _, _ = _http(f"{self.container}/{name}", "PUT", self.auth, content(name),
                                 timeout=30)
            if status == 201:
                self.acked.append(name)
            else:
                self.refused[status] += 1

    def lost(self) -> list[str]:
        return [n for n in self.acked
                if _http(f"{self.container}/{n}", "GET", self.auth)[2] != content(n)]

    def close(self) -> None:
        for name in self.acked:
            _http(f"{self.container}/{name}", "DELETE", self.auth)
        _http(self.container, "DELETE", self.auth)


def wait_for(what: str, check: Callable[[], bool], timeout_s: float, every_s: float = 0.5):
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout_s:
            raise AssertionError(f"waited {timeout_s:.0f} s for {what}")
        time.sleep(every_s)
    return round(time.monotonic() - started, 1)


def ceph_osds_up(cluster: Cluster) -> int:
    with CephAdmin.for_cluster(cluster) as admin:
        return admin.state().num_up_osds


def swift_fault_seen(cluster: Cluster) -> bool:
    with SwiftAdmin(cluster) as admin:
        return admin.state(dispersion=False).fault_seen


def killed_after(statement: str, home: Path) -> None:
    """Run a Python statement (a fault action) in a process of its own, as a run would, with
    its fault ledger file under `home`; SIGKILL it once the statement has returned. What the
    action injected stays, with its ledger entry: what `faultline heal` must undo."""
    env = {**os.environ, "FAULTLINE_HOME": str(home),
           "FAULTLINE_INVENTORY": str(default_inventory())}
    run = subprocess.Popen(
        [sys.executable, "-c", f"import time; {statement}; print('in', flush=True); "
         "time.sleep(120)"], env=env, stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert run.stdout.readline().strip() == "in"
    finally:
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
