"""The librados closed loop's C path (loadgen/rados_ring.c), seen from Python: a librados
connection of its own with an I/O context per container, and the rings it runs.

The C module is built by `make setup` (loadgen/rados_ring_build.py); where it is not built,
`available()` is False and the closed loop runs through python-rados instead.
"""

from __future__ import annotations

import errno
import logging
import os

from .exceptions import DriverError

log = logging.getLogger(__name__)

try:
    from ._rados_ring import ffi, lib
except ImportError:  # not built on this host
    ffi = lib = None

WRITE, READ, DELETE = 0, 1, 2  # rados_ring.c's FL_WRITE, FL_READ, FL_DELETE


def available() -> bool:
    return lib is not None


class RadosRing:
    """One librados connection for the C loop, the driver's twin: same conf, keyring, pool
    and namespaces (containers), same client op timeouts."""

    def __init__(self, conf: str, pool: str, containers: list[str], options: dict[str, str]):
        self.conf = conf
        self.pool = pool
        self.containers = containers
        self.options = options
        self.index = {name: i for i, name in enumerate(containers)}
        self._cluster = None
        self._ioctx = None  # rados_ioctx_t[], one per container
        self.abandoned = 0  # rings left with operations in flight (RingClosedLoop's drain)

    def connect(self) -> None:
        cluster = ffi.new("rados_t *")
        self._check(lib.rados_create2(cluster, b"ceph", b"client.admin", 0), "create a client")
        self._cluster = cluster[0]
        self._check(lib.rados_conf_read_file(self._cluster, self.conf.encode()),
                    f"read {self.conf}")
        for key, value in {**self.options, "client_mount_timeout": "15"}.items():
            self._check(lib.rados_conf_set(self._cluster, key.encode(), value.encode()),
                        f"set {key}")
        self._check(lib.rados_connect(self._cluster), "connect")
        if lib.rados_pool_lookup(self._cluster, self.pool.encode()) < 0:
            self.close()
            raise DriverError(f"pool {self.pool!r} does not exist")
        self._ioctx = ffi.new("rados_ioctx_t[]", len(self.containers))
        for i, container in enumerate(self.containers):
            one = ffi.new("rados_ioctx_t *")
            self._check(lib.rados_ioctx_create(self._cluster, self.pool.encode(), one),
                        f"open pool {self.pool!r}")
            lib.rados_ioctx_set_namespace(one[0], container.encode())
            self._ioctx[i] = one[0]

    def _check(self, ret: int, what: str) -> None:
        if ret < 0:
            self.close()
            raise DriverError(f"librados: cannot {what}: {_errno_name(ret)}")

    def new(self, slots: int, plan_cap: int):
        """A ring of `slots` operations in flight and `plan_cap` planned ahead."""
        ring = lib.fl_ring_new(self._ioctx, len(self.containers), slots, plan_cap)
        if ring == ffi.NULL:
            raise MemoryError("cannot allocate a librados ring")
        return ring

    def close(self) -> None:
        """Disconnect; not while a ring may still complete (its callbacks would run on a
        connection gone): then the connection is left to the process's end."""
        if self.abandoned:
            log.warning(f"{self.abandoned} librados rings still had operations in flight: "
                        "their connection stays open until this process ends")
            return
        if self._ioctx is not None:
            for i in range(len(self.containers)):
                if self._ioctx[i] != ffi.NULL:
                    lib.rados_ioctx_destroy(self._ioctx[i])
            self._ioctx = None
        if self._cluster is not None:
            lib.rados_shutdown(self._cluster)
            self._cluster = None


def _errno_name(ret: int) -> str:
    return f"{errno.errorcode.get(-ret, ret)} ({os.strerror(-ret)})"
