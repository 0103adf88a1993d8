"""The librados driver: asynchronous I/O through python-rados.

One connection, one I/O context per container (a container is a RADOS
namespace in the inventory's pool), `aio_*` calls with completion callbacks
instead of a thread per in-flight operation.
"""

from __future__ import annotations

import errno

import rados

from .exceptions import DriverError
from .openloop import Done


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
        self.pool = pool
        self.containers = containers
        self._cluster = rados.Rados(conffile=conf, conf=options)
        self._ioctx: dict[str, rados.Ioctx] = {}

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
        for ioctx in self._ioctx.values():
            ioctx.close()
        self._ioctx.clear()
        self._cluster.shutdown()

    def write(self, container: str, name: str, data: bytes, done: Done) -> None:
        size = len(data)

        def complete(completion) -> None:
            ret = completion.get_return_value()
            done(ret >= 0, size, None if ret >= 0 else error_class(ret), None)

        self._submit(done, self._ioctx[container].aio_write_full, name, data,
                     oncomplete=complete)

    def read(self, container: str, name: str, size: int, done: Done) -> None:
        def complete(completion, data) -> None:
            ret = completion.get_return_value()
            done(ret >= 0, len(data or b""), None if ret >= 0 else error_class(ret), data)

        self._submit(done, self._ioctx[container].aio_read, name, max(size, 1), 0,
                     oncomplete=complete)

    def delete(self, container: str, name: str, done: Done) -> None:
        def complete(completion) -> None:
            ret = completion.get_return_value()
            done(ret >= 0, 0, None if ret >= 0 else error_class(ret), None)

        self._submit(done, self._ioctx[container].aio_remove, name, oncomplete=complete)

    @staticmethod
    def _submit(done: Done, call, *args, **kwargs) -> None:
        try:
            call(*args, **kwargs)
        except rados.Error as exc:
            done(False, 0, type(exc).__name__, None)
