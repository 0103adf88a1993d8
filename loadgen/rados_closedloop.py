"""The closed loop through librados' C path (loadgen/rados_ring.c): Python plans operations
ahead in batches, C submits each next one from the completion, Python takes the results in
batches. The same workload as ClosedLoop (mix, ledger, payloads, per-second samples, content
checks), with no Python between a completion and the next submit.

A slot that finds nothing planned waits for this loop's thread: that wait, summed over the
slots, is the client's own queueing (client_held_s), which a calibration reads to tell
whether the generator was the limit (loadgen.busy measures the same for ClosedLoop).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time

from .closedloop import ClosedLoop
from .exceptions import DriverError
from .rados_driver import error_class
from .rados_ring import DELETE, READ, WRITE, RadosRing, ffi, lib

log = logging.getLogger(__name__)

# the longest a result waits to be recorded when few complete; whoever closes a second
# first records what is in (settle)
TAKE_EVERY_S = 0.1
_LEAKED: list = []  # rings that never drained: their buffers must outlive them


class RingClosedLoop(ClosedLoop):
    # a capacity path: no consistency history (and no overwrite, list or head: closed_loop()
    # gives such a mix to ClosedLoop)
    records_history = False

    def __init__(self, rados: RadosRing, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rados = rados
        self._held_s = 0.0
        self._ring = None
        self._taking = threading.Lock()
        self._pending: dict[int, tuple] = {}  # tag: what the result needs, and keep-alives
        self._tags = itertools.count()

    def start(self) -> None:
        missing = [c for c in self.containers if c not in self.rados.index]
        if missing:
            raise DriverError(f"the librados ring has no I/O context for {missing[0]!r}")
        self._prepare()
        slots = self.workload.workers
        # Python, woken at half the plan, must take and plan again before the slots run
        # dry: 4 per slot gave it 2.7 ms at 12,000 reads/s; 16 per slot, unless the reads'
        # buffers planned ahead would pass 64 MiB
        largest = self.workload.size_range()[1]
        self._cap = max(32, 4 * slots, min(16 * slots, 64 * 1024**2 // largest))
        self._ops = ffi.new("fl_op[]", self._cap)
        self._out = ffi.new("fl_done[]", self._cap + slots)
        self._planned = ffi.new("size_t *")
        self._in_flight = ffi.new("int *")
        self._payload = ffi.from_buffer(self.payloads.buffer)
        self._ring = self.rados.new(slots, self._cap)
        lib.fl_ring_start(self._ring)
        self._drain_until: float | None = None
        # the base's thread runs _schedule (its failures become self.failure)
        self._thread = threading.Thread(target=self._run, name="faultline-radosloop",
                                        daemon=True)
        self._thread.start()

    def stop(self, drain_s: float = 35.0) -> None:
        self._drain_until = time.monotonic() + drain_s
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def client_held_s(self) -> float:
        """Slot-seconds the slots spent waiting for this loop's planning, so far."""
        with self._taking:  # the drain frees the ring under this lock
            ring = self._ring
            return self._held_s if ring is None else lib.fl_ring_starved_s(ring)

    def settle(self) -> None:
        """Record the results that are in now (before a caller closes a second)."""
        if self._ring is not None:
            with self._taking:
                if self._ring is not None:
                    self._take(0.0, want_plans=True)

    def _schedule(self) -> None:
        ring = self._ring
        try:
            self._plan(self._cap)
            while not self._ending():
                with self._taking:
                    self._take(TAKE_EVERY_S, want_plans=True)
                self._plan(self._cap - self._planned[0])
        finally:
            lib.fl_ring_stop(ring)
            self._drain(ring)

    def _drain(self, ring) -> None:
        """After the ring's stop: take every result until nothing is in flight (bounded by
        the drain; librados' op timeout ends each operation before it), then free it."""
        until = self._drain_until or time.monotonic() + 35.0
        while True:
            with self._taking:
                self._take(TAKE_EVERY_S, want_plans=False)
            if self._in_flight[0] == 0 or time.monotonic() >= until:
                break
        with self._taking:
            self._held_s = lib.fl_ring_starved_s(ring)
            lost = lib.fl_ring_lost(ring)
            busy = lib.fl_ring_free(ring)
            self._ring = None
        if lost:
            self.failure = f"the librados ring lost {lost} results"
        if busy:  # never freed: its operations' buffers and names must stay alive
            log.warning(f"{busy} librados operations still in flight after the drain")
            _LEAKED.append((ring, self._pending, self._ops, self._payload))
            self.rados.abandoned += 1
        else:  # planned, never submitted: the reads' holds and the deletes' objects go back
            for planned in self._pending.values():
                self._unplan(planned)
        self._pending = {}
        self.in_flight = busy

    def _take(self, timeout_s: float, want_plans: bool) -> None:
        """Record the results librados returned (the lock _taking is held)."""
        out, pending = self._out, self._pending
        n = lib.fl_ring_take(self._ring, out, len(out), timeout_s, want_plans,
                             self._planned, self._in_flight)
        recorder, ledger, payloads = self.recorder, self.ledger, self.payloads
        for i in range(n):
            done = out[i]
            op, container, name, size, _name_c, buf = pending.pop(done.tag)
            ret, at = done.ret, done.done
            try:
                if ret < 0:
                    recorder.error(op, at, error_class(ret))
                elif op == "write":
                    recorder.success(op, at, at - done.issued, size)
                    ledger.add(container, name, size)
                elif op == "read":
                    if payloads.matches(name, size, ffi.buffer(buf, ret)):
                        recorder.success(op, at, at - done.issued, ret)
                    else:
                        recorder.error(op, at, "corrupt")
                else:
                    recorder.success(op, at, at - done.issued, 0)
            except Exception:
                log.exception(f"recording a completed {op} of {container}/{name} failed")
            finally:
                if op == "read":
                    ledger.done_reading(container, name)
        self.submitted += n
        self.in_flight = self._in_flight[0]

    def _plan(self, room: int) -> None:
        """Plan up to `room` operations and hand them to the ring."""
        if room <= 0:
            return
        ops, pending, choose = self._ops, self._pending, self._choose
        index, payloads = self.rados.index, self.payloads
        for i in range(room):
            op = choose()
            entry = self._entry_for(op)
            slot, tag, buf = ops[i], next(self._tags), None
            if entry is None:  # a write (or nothing to read or delete yet)
                op = "write"
                container, name = self._new_object(self._rng)
                size = length = payloads.size_of(name)
                slot.kind, slot.buf = WRITE, self._payload + payloads.offset(name, size)
            else:
                container, name, size = entry.container, entry.name, entry.size
                if op == "read":
                    length = size if size > 1 else 1
                    buf = ffi.new("char[]", length)
                    slot.kind, slot.buf = READ, buf
                else:  # the size is kept to give the object back if it is never deleted
                    length = 0
                    slot.kind, slot.buf = DELETE, ffi.NULL
            name_c = ffi.new("char[]", name.encode())
            slot.ioctx, slot.name, slot.len, slot.tag = index[container], name_c, length, tag
            pending[tag] = (op, container, name, size, name_c, buf)
        taken = lib.fl_ring_plan(self._ring, ops, room)
        for unplanned in range(taken, room):  # no room after all: give them back
            self._unplan(pending.pop(ops[unplanned].tag))

    def _unplan(self, planned: tuple) -> None:
        op, container, name, size, _name_c, _buf = planned
        if op == "read":
            self.ledger.done_reading(container, name)
        elif op == "delete":
            self.ledger.add(container, name, size)
