"""P1-ceph's closed loop (16 in flight, 4 KiB write then read, client on a CPU of its own)
under librados options, beside `rados bench`: does one librados completion thread
(`librados_thread_count = 1`; 2 by default, so python-rados' callbacks and the GIL they take
can move between two threads), or no op timeouts, cost the client less CPU per operation?
Each variant once per round, in a rotating order; prints one line per run. A one-off
experiment (bench/README.md, P1-ceph): it is not in `make bench`.

    .venv/bin/python -m bench.p1_librados_threads [ROUNDS]
"""

from __future__ import annotations

import os
import sys

import rados

from loadgen import rados_driver

from . import labs
from .cpus import separate_cpus
from .load import write_then_read
from .p1_ceph import IN_FLIGHT, SIZE, rados_bench

VARIANTS = {"default": {}, "threads1": {"librados_thread_count": "1"},
            "threads1_notimeout": {"librados_thread_count": "1", "rados_osd_op_timeout": "0",
                                   "rados_mon_op_timeout": "0"}}
EXTRA: dict[str, str] = {}


class _Rados(rados.Rados):
    """rados.Rados with EXTRA added to the driver's configuration."""

    def __init__(self, *args, conf=None, **kwargs):
        super().__init__(*args, conf={**(conf or {}), **EXTRA}, **kwargs)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    # the driver reaches librados through its module's `rados`: this process's driver
    # builds its connection with the variant's options (nothing else uses it here)
    rados_driver.rados = type("rados_with_options", (), {
        "Rados": _Rados, "Ioctx": rados.Ioctx, "Error": rados.Error})
    cluster = labs.cluster("ceph")
    names = [*VARIANTS, "rados_bench"]
    with separate_cpus("ceph") as (servers, client):
        print(f"servers on CPU {servers}, client on CPU {client}", flush=True)
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                if name == "rados_bench":
                    rates, cpu = rados_bench(cluster, 10)
                else:
                    EXTRA.clear()
                    EXTRA.update(VARIANTS[name])
                    cpu = {}
                    rates = write_then_read(cluster, "rados", 10, IN_FLIGHT, SIZE, 1, cpu)
                print(f"round {r} {name:20} write {rates['write']:7.0f} ops/s "
                      f"{cpu['write']:.3f} ms/op  read {rates['read']:7.0f} ops/s "
                      f"{cpu['read']:.3f} ms/op  load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
