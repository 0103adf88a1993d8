"""When a schedule is due (service.schedules.slots): validation, slots, catch-up and DST.

Europe/Berlin in 2024: on 31 March the clocks jump from 02:00 CET (+01:00) to 03:00
CEST (+02:00); on 27 October they fall back from 03:00 CEST to 02:00 CET, so 02:00 to
02:59 happen twice (first at +02:00, then at +01:00).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from service.schedules.slots import ScheduleError, due_slots, next_slot, validate

BERLIN = ZoneInfo("Europe/Berlin")
MINUTE = timedelta(minutes=1)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def berlin(*args: int, fold: int = 0) -> datetime:
    return datetime(*args, tzinfo=BERLIN, fold=fold)


def local(slots: list[datetime], zone: ZoneInfo = BERLIN) -> list[str]:
    """Slots as local wall times with their offsets, the way an operator reads them."""
    return [s.astimezone(zone).strftime("%m-%d %H:%M%z") for s in slots]


def ticked(cron: str, tz: str, start: datetime, end: datetime,
           every: timedelta = MINUTE) -> list[datetime]:
    """What a worker ticking every `every` from `start` to `end` enqueues, each tick asking
    for the slots since the previous tick."""
    slots, since = [], start
    while since < end:
        now = min(since + every, end)
        slots += due_slots(cron, tz, since, now, max_catch_up=1000)
        since = now
    return slots


# validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(("cron", "message"), [
    ("61 * * * *", "invalid cron expression '61 * * * *': minute '61' is not valid "
                   "(allowed: 0-59, with * , - /)"),
    ("0 24 * * *", "invalid cron expression '0 24 * * *': hour '24' is not valid "
                   "(allowed: 0-23, with * , - /)"),
    ("0 0 0 * *", "invalid cron expression '0 0 0 * *': day of month '0' is not valid "
                  "(allowed: 1-31 or L, with * , - /)"),
    ("0 0 * 13 *", "invalid cron expression '0 0 * 13 *': month '13' is not valid "
                   "(allowed: 1-12 or jan-dec, with * , - /)"),
    ("0 0 * * 8", "invalid cron expression '0 0 * * 8': day of week '8' is not valid "
                  "(allowed: 0-7 or sun-sat, with * , - /)"),
    ("*/0 * * * *", "invalid cron expression '*/0 * * * *': minute '*/0' is not valid "
                    "(allowed: 0-59, with * , - /)"),
    ("5,65 * * * *", "invalid cron expression '5,65 * * * *': minute '5,65' is not valid "
                     "(allowed: 0-59, with * , - /)"),
    ("* * * *", "invalid cron expression '* * * *': expected 5 fields (minute hour "
                "day-of-month month day-of-week), got 4"),
    ("0 * * * * *", "invalid cron expression '0 * * * * *': expected 5 fields (minute hour "
                    "day-of-month month day-of-week), got 6"),
    ("", "invalid cron expression '': expected 5 fields (minute hour day-of-month month "
         "day-of-week), got 0"),
    ("@reboot", "invalid cron expression '@reboot': unknown alias (use @hourly, @daily, "
                "@midnight, @weekly, @monthly or @yearly)"),
    ("0 0 30 2 *", "invalid cron expression '0 0 30 2 *': no date matches it"),
])
def test_an_invalid_cron_expression_is_refused_with_what_is_wrong(cron, message):
    with pytest.raises(ScheduleError) as caught:
        validate(cron, "UTC")

    assert str(caught.value) == message


@pytest.mark.parametrize(("tz", "message"), [
    ("Mars/Olympus", "unknown time zone 'Mars/Olympus'"),
    ("europe/berlin", "unknown time zone 'europe/berlin'"),
    ("", "unknown time zone ''"),
    ("../etc/passwd", "unknown time zone '../etc/passwd'"),
    ("/etc/localtime", "unknown time zone '/etc/localtime'"),
    ("localtime", "time zone 'localtime' is the server's, not the schedule's: name an IANA "
                  "zone such as 'Europe/Berlin' or 'UTC'"),
])
def test_an_unknown_time_zone_is_refused(tz, message):
    with pytest.raises(ScheduleError) as caught:
        validate("0 2 * * *", tz)

    assert str(caught.value) == message


@pytest.mark.parametrize(("cron", "tz"), [
    ("*/5 * * * *", "UTC"),
    ("0 2 * * mon-fri", "Europe/Berlin"),
    ("  30   2 * * *  ", "America/New_York"),
    ("0 0 L * *", "Asia/Kolkata"),
    ("0 0 29 2 *", "UTC"),
    ("@daily", "UTC"),
    ("@Hourly", "UTC"),
])
def test_a_valid_schedule_is_accepted(cron, tz):
    validate(cron, tz)


def test_due_slots_refuses_an_invalid_schedule_too():
    with pytest.raises(ScheduleError, match="unknown time zone 'Mars/Olympus'"):
        due_slots("0 2 * * *", "Mars/Olympus", utc(2024, 1, 1), utc(2024, 1, 2))


@pytest.mark.parametrize("call", [
    lambda: due_slots("* * * * *", "UTC", datetime(2024, 1, 1), utc(2024, 1, 1, 0, 5)),
    lambda: due_slots("* * * * *", "UTC", utc(2024, 1, 1), datetime(2024, 1, 1, 0, 5)),
    lambda: next_slot("* * * * *", "UTC", datetime(2024, 1, 1)),
], ids=["since", "now", "after"])
def test_a_naive_datetime_is_refused(call):
    with pytest.raises(ValueError, match=r"must be timezone-aware, got naive 2024-01-01T00:0"):
        call()


def test_a_catch_up_below_one_is_refused():
    with pytest.raises(ValueError, match="max_catch_up must be at least 1, got 0"):
        due_slots("* * * * *", "UTC", utc(2024, 1, 1), utc(2024, 1, 2), max_catch_up=0)


# slots ------------------------------------------------------------------------------------


def test_an_every_minute_schedule_has_one_slot_per_minute_in_the_window():
    slots = due_slots("* * * * *", "UTC", utc(2024, 5, 1, 12, 0, 30), utc(2024, 5, 1, 12, 5, 10),
                      max_catch_up=10)

    assert slots == [utc(2024, 5, 1, 12, m) for m in range(1, 6)]


def test_the_window_excludes_a_slot_at_since_and_includes_a_slot_at_now():
    assert due_slots("*/5 * * * *", "UTC", utc(2024, 5, 1, 12, 0), utc(2024, 5, 1, 12, 5),
                     max_catch_up=10) == [utc(2024, 5, 1, 12, 5)]


def test_nothing_is_due_between_two_slots():
    assert due_slots("0 2 * * *", "UTC", utc(2024, 5, 1, 2, 0), utc(2024, 5, 2, 1, 59)) == []


def test_nothing_is_due_when_now_is_before_since():
    assert due_slots("* * * * *", "UTC", utc(2024, 5, 1, 12, 5), utc(2024, 5, 1, 12, 0)) == []


@pytest.mark.parametrize("every", [MINUTE, timedelta(seconds=10)])  # the worker's tick: 10 s
def test_a_worker_ticking_every_minute_or_10_s_gets_each_slot_exactly_once(every):
    start = utc(2024, 5, 1, 11, 59, 7)  # ticks a few seconds past the minute

    slots = ticked("*/10 * * * *", "UTC", start, start + timedelta(hours=1), every=every)

    assert slots == [utc(2024, 5, 1, 12, m) for m in range(0, 60, 10)]


def test_the_worker_ticks_every_10_seconds():
    from service.worker.tasks import blueprint

    (periodic,) = [p for p in blueprint().periodic_registry.periodic_tasks.values()]
    assert periodic.cron == "* * * * * */10"


def test_slots_are_aware_utc_whatever_the_zone_of_the_window():
    tokyo = ZoneInfo("Asia/Tokyo")

    slots = due_slots("0 2 * * *", "Europe/Berlin", datetime(2024, 5, 1, 12, tzinfo=tokyo),
                      datetime(2024, 5, 2, 12, tzinfo=tokyo))

    assert slots == [utc(2024, 5, 2, 0, 0)]  # 02:00 CEST
    assert slots[0].tzinfo is UTC


def test_a_schedule_runs_on_its_own_wall_clock_not_the_servers():
    assert due_slots("30 9 * * mon-fri", "America/New_York", utc(2024, 5, 3, 14),
                     utc(2024, 5, 6, 14)) == [utc(2024, 5, 6, 13, 30)]  # Monday 09:30 EDT


# catch-up ---------------------------------------------------------------------------------


def test_after_an_outage_only_the_latest_missed_slot_is_due_by_default():
    slots = due_slots("0 2 * * *", "Europe/Berlin", utc(2024, 5, 1, 0, 0), utc(2024, 5, 31, 9, 0))

    assert local(slots) == ["05-31 02:00+0200"]


def test_max_catch_up_gives_the_latest_missed_slots_oldest_first():
    slots = due_slots("0 2 * * *", "Europe/Berlin", utc(2024, 5, 1, 0, 0), utc(2024, 5, 31, 9, 0),
                      max_catch_up=3)

    assert local(slots) == ["05-29 02:00+0200", "05-30 02:00+0200", "05-31 02:00+0200"]


def test_a_long_outage_of_a_busy_schedule_gives_only_the_latest_slots():
    slots = due_slots("* * * * *", "UTC", utc(2023, 1, 1), utc(2024, 1, 1, 0, 0, 30),
                      max_catch_up=2)

    assert slots == [utc(2023, 12, 31, 23, 59), utc(2024, 1, 1, 0, 0)]


# daylight saving time ----------------------------------------------------------------------


def test_a_nightly_0200_run_follows_the_local_clock_across_the_spring_change():
    slots = due_slots("0 2 * * *", "Europe/Berlin", utc(2024, 3, 29, 12), utc(2024, 4, 2, 12),
                      max_catch_up=10)

    # 02:00 does not exist on 31 March: the run starts when the clocks jump, at 03:00 CEST
    assert local(slots) == ["03-30 02:00+0100", "03-31 03:00+0200", "04-01 02:00+0200",
                            "04-02 02:00+0200"]
    assert slots == [utc(2024, 3, 30, 1), utc(2024, 3, 31, 1), utc(2024, 4, 1, 0),
                     utc(2024, 4, 2, 0)]


def test_a_slot_skipped_by_the_spring_change_runs_when_the_clocks_jump():
    slots = due_slots("30 2 * * *", "Europe/Berlin", utc(2024, 3, 30, 12), utc(2024, 3, 31, 12))

    assert local(slots) == ["03-31 03:00+0200"]


def test_skipped_and_real_slots_at_the_jump_are_one_slot():
    slots = due_slots("0 * * * *", "Europe/Berlin", berlin(2024, 3, 31, 0, 30),
                      berlin(2024, 3, 31, 4, 30), max_catch_up=10)

    assert local(slots) == ["03-31 01:00+0100", "03-31 03:00+0200", "03-31 04:00+0200"]


def test_a_nightly_run_in_the_repeated_hour_of_the_fall_change_runs_once():
    slots = due_slots("30 2 * * *", "Europe/Berlin", utc(2024, 10, 26, 12), utc(2024, 10, 28, 12),
                      max_catch_up=10)

    # 02:30 happens at 00:30 UTC (CEST) and again at 01:30 UTC (CET): the first counts
    assert local(slots) == ["10-27 02:30+0200", "10-28 02:30+0100"]


def test_a_schedule_with_a_wildcard_runs_through_both_passes_of_the_repeated_hour():
    slots = due_slots("*/20 * * * *", "Europe/Berlin", berlin(2024, 10, 27, 1, 50),
                      berlin(2024, 10, 27, 3, 10), max_catch_up=100)

    assert local(slots) == [
        "10-27 02:00+0200", "10-27 02:20+0200", "10-27 02:40+0200",
        "10-27 02:00+0100", "10-27 02:20+0100", "10-27 02:40+0100", "10-27 03:00+0100"]


@pytest.mark.parametrize("cron", ["30 2 * * *", "0 2 * * *", "*/20 * * * *", "0 * * * *"])
@pytest.mark.parametrize("night", [utc(2024, 3, 30, 23), utc(2024, 10, 26, 22)],
                         ids=["spring", "fall"])
def test_ticking_through_a_dst_night_gives_the_same_slots_as_one_window(cron, night):
    end = night + timedelta(hours=5)

    slots = ticked(cron, "Europe/Berlin", night, end, every=7 * MINUTE)

    assert slots == due_slots(cron, "Europe/Berlin", night, end, max_catch_up=1000)
    assert len(set(slots)) == len(slots)


def test_a_half_hour_dst_shift_is_handled():
    # Lord Howe Island moves its clocks by 30 minutes: 02:00 +10:30 becomes 02:30 +11:00
    lord_howe = ZoneInfo("Australia/Lord_Howe")

    slots = due_slots("0 * * * *", "Australia/Lord_Howe", utc(2024, 10, 5, 14),
                      utc(2024, 10, 5, 16, 30), max_catch_up=10)

    assert local(slots, lord_howe) == ["10-06 01:00+1030", "10-06 02:30+1100",
                                       "10-06 03:00+1100"]


# next slot --------------------------------------------------------------------------------


def test_the_next_slot_is_strictly_after_the_moment_given():
    assert next_slot("0 2 * * *", "UTC", utc(2024, 5, 1, 2, 0)) == utc(2024, 5, 2, 2, 0)


def test_the_next_slot_of_a_skipped_time_is_the_jump():
    assert next_slot("30 2 * * *", "Europe/Berlin", utc(2024, 3, 30, 12)) == utc(2024, 3, 31, 1)


def test_the_next_slot_after_a_fixed_time_run_skips_its_repeat():
    first = berlin(2024, 10, 27, 2, 30)  # the first pass, CEST

    assert local([next_slot("30 2 * * *", "Europe/Berlin", first)]) == ["10-28 02:30+0100"]


def test_the_next_slot_of_a_wildcard_schedule_in_the_first_pass_is_in_the_repeat():
    last_of_first_pass = berlin(2024, 10, 27, 2, 40)

    assert local([next_slot("*/20 * * * *", "Europe/Berlin", last_of_first_pass)]) == [
        "10-27 02:00+0100"]
