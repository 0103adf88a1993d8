"""The librados driver: asynchronous I/O through python-rados.

One connection, one I/O context per container (a container is a RADOS
namespace in the inventory's pool), `aio_*` calls with completion callbacks
instead of a thread per in-flight operation.

python-rados runs each callback in librados' finisher, a C++ thread Python does not know,
which would cost a new Python thread state per operation: the driver keeps the finisher's
(loadgen/thread_state.py) and gives it back in close(), before librados shuts down.

A head is a stat. A list walks the namespace's objects: python-rados has no asynchronous
listing, so one listing thread serves the lists in turn (a listing visits every PG of the
pool; several at once would only queue on the OSDs).
"""

from __future__ import annotations

import errno
import logging
import queue
import threading

import rados

from . import rados_ring
from .exceptions import DriverError
from .openloop import Done
from .rados_ring import RadosRing
from .thread_state import ThreadStates

log = logging.getLogger(__name__)


def error_class(ret: int) -> str:
    """Class of a negative errno from librados: 'timeout' or the errno name."""
    code = -ret
    if code == errno.ETIMEDOUT:
        return "timeout"
    return errno.errorcode.get(code, f"errno{code}")


class RadosDriver:
    def __init__(self, conf: str, pool: str, containers: list[str],
                 keyring: str | None = None, op_timeout_s: int = 30):
        options = {"rados_osd_op_timeout": str(op_timeout_s),
                   "rados_mon_op_timeout": str(op_timeout_s)}
        if keyring:
            options["keyring"] = keyring
        self.conf = conf
        self.options = options
        self.pool = pool
        self.containers = containers
        self._cluster = rados.Rados(conffile=conf, conf=options)
        self._ioctx: dict[str, rados.Ioctx] = {}
        self._states = ThreadStates()
        self._ring: RadosRing | None = None
        self._lists: queue.SimpleQueue[tuple[str, Done] | None] | None = None
        self._lister: threading.Thread | None = None

    def ring(self) -> RadosRing | None:
        """The C path's own connection, made on first use (closedloop.closed_loop asks for
        it); None where loadgen._rados_ring is not built."""
        if self._ring is None and rados_ring.available():
            ring = RadosRing(self.conf, self.pool, self.containers, self.options)
            ring.connect()
            self._ring = ring
        return self._ring

    def connect(self) -> None:
        try:
            self._cluster.connect(timeout=15)
            if not self._cluster.pool_exists(self.pool):
                raise DriverError(f"pool {self.pool!r} does not exist")
            for container in self.containers:
                ioctx = self._cluster.open_ioctx(self.pool)
                ioctx.set_namespace(container)
                self._ioctx[container] = ioctx
        except rados.Error as exc:
            raise DriverError(f"cannot open pool {self.pool!r}: {exc}") from None

    def check_access(self) -> None:
        """Connect and look the pool up; changes nothing. DriverError if that fails."""
        try:
            self._cluster.connect(timeout=15)
            if not self._cluster.pool_exists(self.pool):
                raise DriverError(f"pool {self.pool!r} does not exist")
        except rados.Error as exc:
            raise DriverError(f"cannot reach the Ceph cluster: {exc}") from None
        finally:
            self._cluster.shutdown()

    def close(self) -> None:
        if self._lister is not None:
            self._lists.put(None)  # after the lists queued: each completes first
            self._lister.join()
            self._lister = None
        if self._ring is not None:
            self._ring.close()
            self._ring = None
        self._give_back_states()
        for ioctx in self._ioctx.values():
            ioctx.close()
        self._ioctx.clear()
        self._cluster.shutdown()

    def _give_back_states(self, wait_s: float = 2.0) -> None:
        """Run one callback on each thread whose state is kept, to drop the extra hold (a
        stat of an absent object: read-only). Bounded: a state left is a few KiB."""
        if not self._ioctx:
            return
        ioctx = next(iter(self._ioctx.values()))
        for _ in range(3):
            if not self._states.held:
                return
            over = threading.Event()

            def complete(_completion, _size, _mtime, over=over) -> None:
                self._states.give_back()
                over.set()

            try:
                ioctx.aio_stat("faultline-thread-state", complete)
            except rados.Error:
                return
            if not over.wait(wait_s):
                return

    # Each call builds one small completion closure and submits directly: these run once per
    # operation, and every extra Python frame or keyword call shows in the client's CPU.
    def write(self, container: str, name: str, data: bytes, done: Done) -> None:
        size, keep = len(data), self._states.keep

        def complete(completion) -> None:
            keep()
            ret = completion.get_return_value()
            if ret >= 0:
                done(True, size, None, None)
            else:
                done(False, size, error_class(ret), None)

        try:
            self._ioctx[container].aio_write_full(name, data, complete)
        except rados.Error as exc:
            done(False, 0, type(exc).__name__, None)

    def read(self, container: str, name: str, size: int, done: Done) -> None:
        keep = self._states.keep
        def complete(completion, data) -> None:
            keep()
            ret = completion.get_return_value()
            if ret >= 0:
                done(True, len(data) if data else 0, None, data)
            else:
                done(False, len(data) if data else 0, error_class(ret), data)

        try:
            self._ioctx[container].aio_read(name, size if size > 1 else 1, 0, complete)
        except rados.Error as exc:
            done(False, 0, type(exc).__name__, None)

    def delete(self, container: str, name: str, done: Done) -> None:
        keep = self._states.keep
        def complete(completion) -> None:
            keep()
            ret = completion.get_return_value()
            if ret >= 0:
                done(True, 0, None, None)
            else:
                done(False, 0, error_class(ret), None)

        try:
            self._ioctx[container].aio_remove(name, complete)
        except rados.Error as exc:
            done(False, 0, type(exc).__name__, None)

    def head(self, container: str, name: str, done: Done) -> None:
        keep = self._states.keep
        def complete(completion, _size, _mtime) -> None:
            keep()
            ret = completion.get_return_value()
            done(ret >= 0, 0, None if ret >= 0 else error_class(ret), None)

        try:
            self._ioctx[container].aio_stat(name, complete)
        except rados.Error as exc:
            done(False, 0, type(exc).__name__, None)

    def list(self, container: str, done: Done) -> None:
        if self._lister is None:
            self._lists = queue.SimpleQueue()
            self._lister = threading.Thread(target=self._list_each, name="faultline-rados-list",
                                            daemon=True)
            self._lister.start()
        self._lists.put((container, done))

    def _list_each(self) -> None:
        while (job := self._lists.get()) is not None:
            container, done = job
            try:
                names = [o.key for o in self._ioctx[container].list_objects()]
            except rados.Error as exc:
                ret = getattr(exc, "errno", None)
                answer = (False, 0, error_class(-ret) if ret else type(exc).__name__, None)
            else:
                data = "\n".join(names).encode()
                answer = (True, len(data), None, data)
            try:
                done(*answer)
            except Exception:  # the next list must still be served
                log.exception(f"a completed list of {container} could not be recorded")
