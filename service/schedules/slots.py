"""When a schedule is due: the slot times of a cron expression in an IANA time zone. Pure.

A schedule is a five-field cron expression (minute hour day-of-month month
day-of-week, or one of the aliases @hourly, @daily/@midnight, @weekly, @monthly,
@yearly/@annually) read on the wall clock of its time zone. Its *slots* are the
instants (aware, UTC, on a whole minute) at which it fires. The worker ticks every
minute, asks `due_slots` for the slots since the last one it enqueued, and
enqueues each under a unique key (schedule id, slot): the slots are a function of
the expression and the zone only, never of when the worker asks, so overlapping
windows or two workers enqueue a slot at most once.

Daylight saving time, decided as Vixie cron and cronie do:
- a wall time that the clocks skip (02:30 on the spring-forward night in
  Europe/Berlin, where 02:00 CET becomes 03:00 CEST) fires at the instant the
  clocks jump (03:00 CEST): a nightly run is moved, never lost. Several skipped
  wall times collapse into that one slot, which is also the 03:00 slot when the
  expression has one;
- a wall time that the clocks repeat (02:30 on the fall-back night, once in CEST
  and again in CET) fires once, at its first occurrence, when the expression is
  fixed-time (neither its minute nor its hour field starts with '*'), so a
  nightly run does not run twice; an expression whose minute or hour field
  starts with '*' (every 20 minutes, every hour) fires in both passes, because
  real time goes on for the hour the clocks repeat.

After a long outage only the latest `max_catch_up` missed slots are returned (one
by default): an operator wants last night's resilience run, not thirty of them
queued at once. The older slots are skipped for good.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadDateError, CroniterError, croniter

from .exceptions import ScheduleError

__all__ = ["ScheduleError", "due_slots", "next_slot", "validate"]

ALIASES = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
FIELDS = (
    ("minute", "0-59"), ("hour", "0-23"), ("day of month", "1-31 or L"),
    ("month", "1-12 or jan-dec"), ("day of week", "0-7 or sun-sat"),
)

_PROBE_START = datetime(2000, 1, 1)  # any date: an expression that matches none fails from here


def validate(cron: str, tz: str) -> None:
    """Refuse an invalid cron expression or an unknown time zone with one clear message."""
    _parse(cron)
    _zone(tz)


def due_slots(cron: str, tz: str, since: datetime, now: datetime,
              max_catch_up: int = 1) -> list[datetime]:
    """The slots in (since, now], oldest first, at most the latest `max_catch_up` of them.

    `since` is the latest slot already enqueued for the schedule (or the moment it was
    created or enabled); `now` is the tick. Both must be aware; the slots are aware UTC.
    When more than `max_catch_up` slots fell in the window (the worker was down), the older
    ones are dropped. An empty list when nothing is due or when `now` is before `since`.
    """
    _require_aware(since=since, now=now)
    if max_catch_up < 1:
        raise ValueError(f"max_catch_up must be at least 1, got {max_catch_up}")
    expr, fixed_time = _parse(cron)
    zone = _zone(tz)
    since = since.astimezone(UTC)
    found: list[datetime] = []
    for slot in _slots_down_from(expr, fixed_time, zone, now.astimezone(UTC)):
        if slot <= since or len(found) == max_catch_up:
            break
        found.append(slot)
    return found[::-1]


def next_slot(cron: str, tz: str, after: datetime) -> datetime:
    """The first slot strictly after `after` (aware), as aware UTC: for display."""
    _require_aware(after=after)
    expr, fixed_time = _parse(cron)
    return next(_slots_up_from(expr, fixed_time, _zone(tz), after.astimezone(UTC)))


# How the slots are found. croniter walks the wall clock as naive datetimes, where there is
# no DST (its own handling of aware datetimes assumes one-hour shifts and, on Lord Howe
# Island's half-hour shift, gave different slots depending on where it started). Each wall
# time w maps to its instants: first(w), the instant when it exists once, its first pass
# when the clocks repeat it, or the jump when they skip it; and second(w), its repeat.
# first() never decreases as w grows, and the repeats of a repeated stretch fall after the
# first passes of every wall time before the stretch's end and before those of every later
# wall time. So walking up, nothing at or after w comes before first(w); walking down,
# nothing at or before w comes after second(w) (or first(w) when w is not repeated). A few
# pending instants are held back until that bound passes them.


def _slots_up_from(expr: str, fixed_time: bool, zone: ZoneInfo,
                   after: datetime) -> Iterator[datetime]:
    """The slots after `after` (UTC), ascending."""
    wall = _wall(after, zone)
    first, second = _instants(wall, zone)
    if second is not None:  # repeated: in its first pass, the repeats of the wall times
        # before it (the stretch is at most second - first long) still lie ahead
        wall -= second - first
    it = croniter(expr, wall - timedelta(seconds=1))
    pending: list[datetime] = []
    last: datetime | None = None
    while True:
        first, second = _instants(it.get_next(datetime), zone)
        for slot in sorted(u for u in pending if u < first):
            if slot > after and slot != last:
                yield slot
                last = slot
        pending = [u for u in pending if u >= first] + _fired(first, second, fixed_time)


def _slots_down_from(expr: str, fixed_time: bool, zone: ZoneInfo,
                     upto: datetime) -> Iterator[datetime]:
    """The slots at or before `upto` (UTC), descending."""
    wall = _wall(upto, zone)
    first, second = _instants(wall, zone)
    if second is not None:  # repeated: in its repeat, the first passes of the wall times
        # after it (the stretch is at most second - first long) still lie behind
        wall += second - first
    it = croniter(expr, wall + timedelta(seconds=1))
    pending: list[datetime] = []
    last: datetime | None = None
    while True:
        first, second = _instants(it.get_prev(datetime), zone)
        bound = first if second is None else second
        for slot in sorted((u for u in pending if u > bound), reverse=True):
            if slot <= upto and slot != last:
                yield slot
                last = slot
        pending = [u for u in pending if u <= bound] + _fired(first, second, fixed_time)


def _fired(first: datetime, second: datetime | None, fixed_time: bool) -> list[datetime]:
    """A wall time's slots: its repeat too, unless the expression is fixed-time."""
    return [first] if second is None or fixed_time else [first, second]


def _wall(moment: datetime, zone: ZoneInfo) -> datetime:
    return moment.astimezone(zone).replace(tzinfo=None, fold=0)


def _instants(wall: datetime, zone: ZoneInfo) -> tuple[datetime, datetime | None]:
    """The instants (UTC) of a naive wall time: (first, repeat or None).

    A skipped wall time's first instant is the jump: the moment the clocks moved forward.
    """
    early = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    late = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    if early == late:
        return early, None
    if _wall(early, zone) == wall:  # it exists: the clocks repeat it
        return min(early, late), max(early, late)
    # skipped: the jump is the first whole second with the new offset, in (lo, hi]
    lo, hi = math.floor(min(early, late).timestamp()), math.ceil(max(early, late).timestamp())
    new_offset = datetime.fromtimestamp(hi, zone).utcoffset()
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if datetime.fromtimestamp(mid, zone).utcoffset() == new_offset:
            hi = mid
        else:
            lo = mid
    return datetime.fromtimestamp(hi, UTC), None


def _parse(cron: str) -> tuple[str, bool]:
    """The five-field expression (aliases expanded) and whether it is fixed-time."""
    text = " ".join(cron.split())
    if text.startswith("@"):
        if text.lower() not in ALIASES:
            raise ScheduleError(f"invalid cron expression '{cron}': unknown alias (use "
                                "@hourly, @daily, @midnight, @weekly, @monthly or @yearly)")
        text = ALIASES[text.lower()]
    fields = text.split()
    if len(fields) != len(FIELDS):
        raise ScheduleError(
            f"invalid cron expression '{cron}': expected 5 fields (minute hour day-of-month "
            f"month day-of-week), got {len(fields)}")
    for i, (name, allowed) in enumerate(FIELDS):
        alone = " ".join(field if j == i else "*" for j, field in enumerate(fields))
        if not croniter.is_valid(alone):
            raise ScheduleError(f"invalid cron expression '{cron}': {name} '{fields[i]}' is "
                                f"not valid (allowed: {allowed}, with * , - /)")
    try:
        croniter(text, _PROBE_START).get_next(datetime)
    except CroniterBadDateError:
        raise ScheduleError(f"invalid cron expression '{cron}': no date matches it") from None
    except CroniterError as e:
        raise ScheduleError(f"invalid cron expression '{cron}': {e}") from None
    fixed_time = not (fields[0].startswith("*") or fields[1].startswith("*"))
    return text, fixed_time


def _zone(tz: str) -> ZoneInfo:
    if tz == "localtime":
        raise ScheduleError("time zone 'localtime' is the server's, not the schedule's: name "
                            "an IANA zone such as 'Europe/Berlin' or 'UTC'")
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(f"unknown time zone '{tz}'") from None


def _require_aware(**moments: datetime) -> None:
    for name, moment in moments.items():
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError(f"{name} must be timezone-aware, got naive {moment.isoformat()}")
