"""Chaos Toolkit's exit signals interrupt a run at once, whichever thread the kernel hands
them to.

A cancel is SIGUSR1 (an abort alert too): chaoslib's handler raises in the main thread, and
its rollbacks run. CPython runs handlers in the main thread only, and a signal the kernel
delivers to another thread (the load generator's, librados' own, while the main thread
blocks signals to create one) does not wake the main thread from `time.sleep`, where
chaoslib waits out an activity's `pauses`; other threads running Python meanwhile can
clear the flag that makes it check. A cancel of a run holding a fault with a 600 s pause
waited the 600 s (CI, stop 34). So, while a run is in progress, a watcher thread reads each
signal off the wakeup fd and pokes the main thread with a signal of its own, whose handler
does nothing: the interrupted sleep then runs the pending handlers.
"""

from __future__ import annotations

import os
import signal
import threading

EXIT_SIGNALS = frozenset({signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM})
POKE = signal.SIGWINCH  # ignored by default: nothing else in a run process expects it


class PromptExitSignals:
    """Installed from the main thread; `close` puts back what it replaced."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)  # set_wakeup_fd's requirement
        self._main = threading.main_thread().ident
        self._old_fd = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        self._old_poke = signal.signal(POKE, _nothing)
        self._watcher = threading.Thread(target=self._watch, name="faultline-exit-signals",
                                         daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        while data := os.read(self._read, 64):  # empty once the write end is closed
            if any(signum in EXIT_SIGNALS for signum in data):
                signal.pthread_kill(self._main, POKE)

    def close(self) -> None:
        signal.set_wakeup_fd(self._old_fd)
        signal.signal(POKE, self._old_poke)
        os.close(self._write)
        self._watcher.join(timeout=5)
        os.close(self._read)


def prompt_exit_signals() -> PromptExitSignals | None:
    """Watch the exit signals for the main thread; None when not called from it (nothing
    to install: only the main thread can set the wakeup fd)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return PromptExitSignals()


def _nothing(signum: int, frame: object) -> None:
    """The poke only interrupts the main thread's wait; the exit signal's own handler acts."""
