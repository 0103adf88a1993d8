"""An operator's Ctrl-C stops a suite: the run under way is interrupted as chaoslib does it
(a KeyboardInterrupt: the run ends `interrupted`, its rollbacks run), and no further run of
the suite starts. Without this, chaoslib's catch of the KeyboardInterrupt ended only that
run and the suite went on to the next one."""

from __future__ import annotations

import signal

REASON = "the suite was stopped (Ctrl-C)"


class StopOnCtrlC:
    """While inside: SIGINT is remembered, then raised as Python does. Where SIGINT is
    ignored (a job a shell started in the background) it stays ignored."""

    def __init__(self) -> None:
        self.pressed = False
        self._old = None

    def __enter__(self) -> StopOnCtrlC:
        old = signal.getsignal(signal.SIGINT)
        if callable(old):
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)

    def _handle(self, signum, frame) -> None:
        self.pressed = True
        raise KeyboardInterrupt

    def reason(self) -> str | None:
        """Why no further run starts, once Ctrl-C was pressed."""
        return REASON if self.pressed else None
