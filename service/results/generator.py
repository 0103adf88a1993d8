"""Whether a calibration's stage measured its load generator rather than the cluster, and so
whether its knee is only a lower bound of the capacity.

A stage is generator-bound when either test holds:

1. The client's own queueing: `client_busy` is at least CLIENT_BUSY (0.8). `client_busy`
   (loadgen.busy) is the time the generator's threads spent between a completion and the
   next submit (the completion callback, from which the closed loop issues its next
   operation), summed over the stage's measured seconds and divided by them: the mean
   number of slots held by the client instead of the cluster, by Little's law how far the
   in-flight count fell below its target. librados runs every completion on one finisher
   thread, a single server that every operation passes: busy a share p of the time, the
   stage's throughput is p times the most that thread can complete (one per callback
   time), and a completion waits for it p/(1-p) callback times on average (an M/M/1
   queue): 4 at 0.8, without bound past it. So at 0.8 the generator could have added at
   most 1/0.8 - 1 = 25% more, whatever the load asked, and less in fact as that wait grows:
   a throughput that flattens there may be the generator's own, and the knee says "at
   least". Below 0.8 the generator had more than 25% to spare, five times the 5% the sweep
   calls a rise (capacity.RISE), so a flattening the sweep found is the cluster's. The
   cluster's latency needs no test of its own: in a closed loop the in-flight count falls
   short only by what the client holds; a slower cluster holds its slots longer, which
   lowers the throughput and with it the share. With several completion threads (the
   Swift workers) the share also counts the time they wait for each other (the GIL), so
   it reaches the bound sooner: the test errs towards "at least".
2. Its CPU: the generator's process used more than `generator_cpu_cores` (0.8, the
   baseline check's bound: its Python threads share one GIL). CPU alone is not the test,
   since the generator can be the limit well below a core (it waits for the GIL and for the
   CPU it shares), but it is kept: client work a driver does outside the callbacks (a Swift
   worker parsing an answer before it calls back) shows as latency, not as `client_busy`.

A stage measured before `client_busy` existed (None) is judged by its CPU alone. The knee
is a lower bound when any stage of its level is generator-bound; a sweep ends at the first
generator-bound stage (capacity.stop_reason): more load would only measure the generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

CLIENT_BUSY = 0.8  # the slots held by the client, on average: one finisher thread 80% busy

LOWER_BOUND = ("the load generator was the limit at the knee: the cluster can carry at least "
               "this much, maybe more; calibrate again with more drivers to know")


class Stage(Protocol):  # capacity.Stage, as far as the rule reads it
    in_flight: int
    repeat: int
    client_busy: float | None
    generator_cpu_cores: float | None


class Limits(Protocol):  # capacity.Limits' bounds of the generator
    client_busy: float
    generator_cpu_cores: float


def why_bound(stage: Stage, limits: Limits) -> str | None:
    """Why the stage measured the generator (the first test that holds), or None."""
    at = f"with {stage.in_flight} in flight"
    if stage.client_busy is not None and stage.client_busy >= limits.client_busy:
        return (f"the client held {stage.client_busy:.2f} slots between a completion and the "
                f"next submit {at} (bound {limits.client_busy:.2f}): completions queued "
                "behind the generator's own work")
    if stage.generator_cpu_cores is not None \
            and stage.generator_cpu_cores > limits.generator_cpu_cores:
        return (f"the load generator used {stage.generator_cpu_cores:.2f} cores {at} (bound "
                f"{limits.generator_cpu_cores:.2f})")
    return None


def knee_verdict(knee_stages: Sequence[Stage], every_stage: Sequence[Stage],
                 limits: Limits) -> dict[str, Any]:
    """What a calibration stores of the rule (Calibration.spread's `generator`): whether its
    knee is a lower bound and why (the knee level's busiest stage that is bound), the
    bounds, and every stage's `client_busy`."""
    bound = sorted((s for s in knee_stages if why_bound(s, limits)),
                   key=lambda s: -(s.client_busy or 0.0))
    return {"lower_bound": bool(bound), "why": why_bound(bound[0], limits) if bound else None,
            "client_busy_bound": limits.client_busy,
            "cpu_cores_bound": limits.generator_cpu_cores,
            "stages": [{"in_flight": s.in_flight, "repeat": s.repeat,
                        "client_busy": s.client_busy} for s in every_stage]}
