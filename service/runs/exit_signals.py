"""Chaos Toolkit's exit signals, and Ctrl-C, interrupt a run at once, whichever thread the
kernel hands them to.

A cancel is SIGUSR1 (an abort alert too): chaoslib's handler raises in the main thread, and
its rollbacks run. CPython runs handlers in the main thread only, and a signal the kernel
delivers to another thread (the load generator's, librados' own, while the main thread
blocks signals to create one) does not wake the main thread from `time.sleep`, where
chaoslib waits out an activity's `pauses`; other threads running Python meanwhile can
clear the flag that makes it check. A cancel of a run holding a fault with a 600 s pause
waited the 600 s (CI, stop 34). So, while a run is in progress, a watcher thread reads each
signal off the wakeup fd and pokes the main thread with a signal of its own, whose handler
does nothing: the interrupted sleep then runs the pending handlers.

One poke is not enough: a poke that lands while the main thread is still on its way into
the sleep (the cancel came 0.1 s after the fault, as chaoslib logged "Pausing after
activity") is left pending like the signal, and the same 600 s went by (a clean-clone
`make test`, session 15). So the exit signals' handlers are wrapped to count their runs,
and the watcher pokes again every POKE_EVERY_S until the main thread has run one for each
signal it read, for at most POKE_FOR_S.
"""

from __future__ import annotations

import os
import signal
import threading

from clusters.polling import PollTimeout, poll_until

# SIGINT too: an operator's Ctrl-C is chaoslib's KeyboardInterrupt (interrupted, rollbacks
# run), and must not wait out a pause either. Where SIGINT is ignored (a job started in the
# background by a shell) its handler is not callable and is left alone.
EXIT_SIGNALS = frozenset({signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM})
POKE = signal.SIGWINCH  # ignored by default: nothing else in a run process expects it
POKE_EVERY_S = 0.2
POKE_FOR_S = 10.0  # a handler that never runs (an exit signal left to its default) is not
                   # waited for longer


class PromptExitSignals:
    """Installed from the main thread, once chaoslib's handlers are; `close` puts back what
    it replaced."""

    def __init__(self, poke=signal.pthread_kill) -> None:
        self._poke = poke  # a test may lose some pokes, as the race does
        self._seen = 0  # exit signals read off the wakeup fd
        self._handled = 0  # exit-signal handlers the main thread ran
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)  # set_wakeup_fd's requirement
        self._main = threading.main_thread().ident
        self._wrappers = {}
        self._wrapped = {}
        for signum in EXIT_SIGNALS:
            handler = signal.getsignal(signum)
            if callable(handler):
                self._wrapped[signum] = handler
                self._wrappers[signum] = self._counting(handler)
                signal.signal(signum, self._wrappers[signum])
        self._old_fd = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        self._old_poke = signal.signal(POKE, _nothing)
        self._watcher = threading.Thread(target=self._watch, name="faultline-exit-signals",
                                         daemon=True)
        self._watcher.start()

    def _counting(self, handler):
        def handle(signum, frame):
            self._handled += 1  # the main thread only: no lock needed
            return handler(signum, frame)
        return handle

    def _watch(self) -> None:
        while data := os.read(self._read, 64):  # empty once the write end is closed
            self._seen += sum(1 for signum in data if signum in self._wrapped)
            try:
                poll_until("the exit signal's handler", self._poked_unless_handled,
                           POKE_FOR_S, POKE_EVERY_S)
            except PollTimeout:
                pass  # left to its default, or never let run: nothing more a poke can do

    def _poked_unless_handled(self) -> bool:
        if self._handled >= self._seen:
            return True
        self._poke(self._main, POKE)
        return False

    def close(self) -> None:
        signal.set_wakeup_fd(self._old_fd)
        signal.signal(POKE, self._old_poke)
        for signum, wrapper in self._wrappers.items():
            if signal.getsignal(signum) is wrapper:  # nobody replaced it since
                signal.signal(signum, self._wrapped[signum])
        os.close(self._write)
        self._watcher.join(timeout=POKE_FOR_S + 5)
        os.close(self._read)


def prompt_exit_signals() -> PromptExitSignals | None:
    """Watch the exit signals for the main thread; None when not called from it (nothing
    to install: only the main thread can set the wakeup fd)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return PromptExitSignals()


def _nothing(signum: int, frame: object) -> None:
    """The poke only interrupts the main thread's wait; the exit signal's own handler acts."""
