"""The throughput deficit of a fault: the operations the clients did not get on time. Pure.

- Offered: the open loop offers the same rate in every second, the baseline's
  (`baseline_ops`, what the steady window completed per second; the baseline check holds
  it to the target rate within 2%). Over the fault window that is `baseline_ops` times its
  number of whole seconds of load.
- Served on time: an operation that completed without error within ON_TIME_S (1 s) of its
  intended start. Latency counts from the intended start, so a stalled operation is late
  however fast it completes once the stall ends; it is read from each second's latency
  histogram, to its precision (3 significant digits). A failed operation, a start the open
  loop could not issue (a missed start, class `not started`) and an operation that
  completed later than that are not served on time.
- `deficit_ops` = max(0, offered - served on time) over the fault window, and `deficit_s` =
  `deficit_ops / baseline_ops`: the same loss in seconds of full load.

Why not the completions of each second, as the mean drop counts them: after a stall the late
operations complete in one burst, and counted as throughput the burst makes up for the stall
(the mean drop of a 2 s stall over a 60 s window is about 0). Late operations are not on time,
so the burst cancels nothing. A per-second max(0, offered - completed) would also keep the
burst out, but it turns the one or two operations that move across each second's boundary
into a deficit in every second of a healthy window; on-time operations summed over the whole
window do not. A closed loop has no intended start: its latency counts from the actual start,
and its offered rate is its baseline throughput.
"""

from __future__ import annotations

from hdrh.histogram import HdrHistogram

ON_TIME_S = 1.0


def on_time_ops(latencies: HdrHistogram, limit_s: float = ON_TIME_S) -> int:
    """Operations of this latency histogram (microseconds) that took at most limit_s."""
    limit_us = limit_s * 1e6
    return sum(item.count_at_value_iterated_to for item in latencies.get_recorded_iterator()
               if latencies.get_lowest_equivalent_value(item.value_iterated_to) <= limit_us)


def deficit(baseline_ops: float, seconds: int, on_time: int) -> tuple[float, float, float]:
    """(offered, deficit in operations, deficit in seconds of full load) of a window of
    `seconds` whole seconds of load in which `on_time` operations were served on time."""
    offered = baseline_ops * seconds
    missing = max(0.0, offered - on_time)
    return offered, missing, missing / baseline_ops
