"""Does a whole-object write (`write_full`, what Faultline's load issues) cost the Ceph lab
more than `rados bench`'s write at offset 0? python-rados alone, 16 in flight, 4 KiB, new
objects, 8 s a run, each run on an idle cluster, A B B A then B A A B; prints each run and the
ratio of the sums. A one-off experiment (bench/README.md, P1-ceph): it is not in `make bench`.

    .venv/bin/python -m bench.p1_write_full
"""

from __future__ import annotations

import threading
import time

import rados

from . import labs
from .load import wait_idle
from .p1_ceph import IN_FLIGHT, SIZE


def closed_loop(ioctx, full: bool, seconds: float = 8.0) -> float:
    """ops/s of new-object writes, IN_FLIGHT always in flight; the objects are removed."""
    slots, done, names, data = threading.Semaphore(IN_FLIGHT), [0], [], b"x" * SIZE

    def complete(_completion) -> None:
        done[0] += 1
        slots.release()

    started = time.monotonic()
    while time.monotonic() - started < seconds:
        slots.acquire()
        names.append(f"p1-write-full-{time.time_ns()}")
        if full:
            ioctx.aio_write_full(names[-1], data, complete)
        else:
            ioctx.aio_write(names[-1], data, 0, complete)
    for _ in range(IN_FLIGHT):
        slots.acquire()
    rate = done[0] / (time.monotonic() - started)
    for name in names:
        ioctx.remove_object(name)
    return rate


def main() -> None:
    cluster = labs.cluster("ceph")
    with rados.Rados(conffile=cluster.client["conf"]) as client:
        with client.open_ioctx(cluster.client.get("pool", "faultline")) as ioctx:
            ioctx.set_namespace("p1-write-full")
            rates: dict[bool, list[float]] = {True: [], False: []}
            for order in ((True, False, False, True), (False, True, True, False)):
                for full in order:
                    wait_idle("ceph")
                    rates[full].append(closed_loop(ioctx, full))
                    print(f"{'write_full' if full else 'write at 0'}: "
                          f"{rates[full][-1]:.0f} ops/s", flush=True)
    print(f"write_full / write at 0: {sum(rates[True]) / sum(rates[False]):.3f}")


if __name__ == "__main__":
    main()
