"""A suite's Ctrl-C (service/cli/ctrl_c.py): remembered, then raised as Python does, so
chaoslib interrupts the run under way and the suite starts no other; an ignored SIGINT
stays ignored; the handler before is put back."""

from __future__ import annotations

import os
import signal

import pytest

from service.cli.ctrl_c import REASON, StopOnCtrlC


def test_ctrl_c_is_raised_and_remembered_and_the_handler_put_back(python_sigint):
    with StopOnCtrlC() as ctrl_c:
        assert ctrl_c.reason() is None
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            signal.sigtimedwait([], 0)  # let the handler run here, not later
        assert ctrl_c.reason() == REASON
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_ignored_ctrl_c_stays_ignored():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with StopOnCtrlC() as ctrl_c:
            os.kill(os.getpid(), signal.SIGINT)
            assert ctrl_c.reason() is None
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
