"""clusters.polling.poll_until: the deadline, the pause, the value and what a timeout says,
on a clock of the test's own (its sleeps only move it), and once on the real one."""

from __future__ import annotations

import time

import pytest

from clusters import polling
from clusters.exceptions import ClusterError
from clusters.polling import PollTimeout, poll_until


class Clock:
    """time.monotonic and time.sleep that only move when something sleeps or asks."""

    def __init__(self, ask_s: float = 0.0):
        self.now = 100.0
        self.ask_s = ask_s  # how long each ask takes
        self.sleeps: list[float] = []
        self.asked_at: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def check(self, answers: list):
        """A check that answers these in turn (the last one for ever); an exception in the
        list is raised."""
        def check():
            self.asked_at.append(self.now - 100.0)
            self.now += self.ask_s
            answer = answers[min(len(self.asked_at), len(answers)) - 1]
            if isinstance(answer, BaseException):
                raise answer
            return answer
        return check


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(polling, "time", clock)
    return clock


def test_poll_until_returns_the_first_true_answer(clock):
    assert poll_until("x", clock.check([None, 0, "", {"osd": 3}]), 60, 1.0) == {"osd": 3}
    assert clock.asked_at == [0.0, 1.0, 2.0, 3.0]


def test_poll_until_pauses_the_interval_between_asks(clock):
    poll_until("x", clock.check([False, False, True]), 60, 2.5)
    assert clock.sleeps == [2.5, 2.5]


def test_poll_until_gives_up_once_the_deadline_passed_after_a_last_ask_at_it(clock):
    with pytest.raises(PollTimeout):
        poll_until("x", clock.check([False]), 10, 1.0)
    assert clock.asked_at == [float(s) for s in range(11)]  # 0 .. 10 s: the last at the deadline
    assert clock.now - 100.0 == 10.0  # and not a pause longer


def test_poll_until_sees_what_came_true_in_the_last_pause(clock):
    assert poll_until("x", clock.check([False] * 3 + [True]), 3, 1.0) is True
    assert clock.asked_at[-1] == 3.0


def test_poll_until_with_no_time_looks_once(clock):
    with pytest.raises(PollTimeout):
        poll_until("x", clock.check([False]), 0, 1.0)
    assert clock.asked_at == [0.0]
    assert clock.sleeps == []


def test_poll_until_timeout_says_what_it_waited_for_and_how_long(clock):
    with pytest.raises(PollTimeout) as timed_out:
        poll_until("osd.3 up", clock.check([False]), 30, 1.0)
    assert str(timed_out.value) == "waited 30 s for osd.3 up"
    assert isinstance(timed_out.value, ClusterError)  # the CLI's one error line


def test_poll_until_timeout_raises_the_callers_error_with_its_message(clock):
    class NotBack(Exception):
        pass

    with pytest.raises(NotBack) as timed_out:
        poll_until("x", clock.check([False]), 5, 1.0, error=NotBack,
                   message="osd.3 still down after 5 s")
    assert str(timed_out.value) == "osd.3 still down after 5 s"


def test_poll_until_message_is_made_from_the_last_answer(clock):
    with pytest.raises(PollTimeout) as timed_out:
        poll_until("x", clock.check([None, 0]), 3, 1.0,
                   message=lambda last: f"the last answer was {last!r}")
    assert str(timed_out.value) == "the last answer was 0"


def test_poll_until_asks_again_after_an_exception_of_retry_on_and_says_the_last(clock):
    check = clock.check([OSError("refused"), OSError("reset"), 7])
    assert poll_until("x", check, 60, 1.0, retry_on=(OSError,)) == 7

    check = Clock.check(clock, [OSError("refused")])
    clock.asked_at.clear()
    with pytest.raises(PollTimeout) as timed_out:
        poll_until("x", check, 2, 1.0, retry_on=(OSError,), message=lambda exc: f"last: {exc}")
    assert str(timed_out.value) == "last: refused"


def test_poll_until_lets_any_other_exception_through_at_once(clock):
    with pytest.raises(ValueError, match="the run ended"):
        poll_until("x", clock.check([False, ValueError("the run ended")]), 60, 1.0,
                   retry_on=(OSError,))
    assert len(clock.asked_at) == 2


def test_poll_until_pause_may_follow_the_asks_length(monkeypatch):
    clock = Clock(ask_s=0.5)
    monkeypatch.setattr(polling, "time", clock)
    poll_until("x", clock.check([False, False, True]), 60, lambda took: took * 2)
    assert clock.sleeps == [1.0, 1.0]


def test_poll_until_waits_on_the_real_clock_and_gives_up_near_its_deadline():
    started = time.monotonic()
    with pytest.raises(PollTimeout):
        poll_until("never", lambda: False, 0.3, 0.05)
    waited = time.monotonic() - started
    assert 0.3 <= waited < 0.3 + 0.05 + 0.2  # the deadline, at most one pause late (+ slack)


def test_a_costly_polls_pause_is_twice_its_length_between_one_and_ten_seconds():
    from clusters.swift.admin import poll_pause

    assert poll_pause(0.1) == 1.0  # a quick poll: the floor
    assert poll_pause(2.0) == 4.0  # polling keeps the cluster busy a third of the time
    # a 60 s dispersion report on a loaded lab: a wait still looks again within 10 s
    assert poll_pause(60.0) == 10.0
    assert poll_pause(60.0, ceiling_s=float("inf")) == 120.0
