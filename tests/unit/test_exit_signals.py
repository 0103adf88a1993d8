"""A cancel (SIGUSR1), or an operator's Ctrl-C (SIGINT), that the kernel hands to a thread
other than the main one still ends the main thread's sleep at once
(service/runs/exit_signals.py); without the watcher it waits the sleep out, and a watcher
whose first pokes are lost (they landed before the main thread entered its sleep) pokes
again until the handler ran. In a process of its own: signal handlers and masks are per
process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import os, signal, sys, threading, time
from service.runs.exit_signals import PromptExitSignals, prompt_exit_signals

pokes = []
def lossy(thread, signum):  # the first three pokes come too early and are lost
    pokes.append(signum)
    if len(pokes) > 3:
        signal.pthread_kill(thread, signum)

def leave(signum, frame):  # what chaoslib's handler does
    raise SystemExit(20)

def spin():  # a thread running Python, like the load generator's
    while True:
        pass

sent = getattr(signal, sys.argv[2])
if sent == signal.SIGUSR1:
    signal.signal(signal.SIGUSR1, leave)
else:  # Python's own, KeyboardInterrupt: a SIGINT ignored by whoever started the tests
    signal.signal(signal.SIGINT, signal.default_int_handler)  # (CI, nohup) is inherited
watcher = {"watched": prompt_exit_signals, "lossy": lambda: PromptExitSignals(lossy),
           "unwatched": lambda: None}[sys.argv[1]]()
threading.Thread(target=spin, daemon=True).start()
# blocked in the main thread only, so the kernel hands the signal to the spinning thread,
# as when librados blocks signals in the main thread to start one of its own
signal.pthread_sigmask(signal.SIG_BLOCK, {sent})
threading.Timer(0.3, os.kill, (os.getpid(), sent)).start()
started = time.monotonic()
try:
    time.sleep(3)
    print(f"slept {time.monotonic() - started:.2f}")
except (SystemExit, KeyboardInterrupt):
    print(f"interrupted {time.monotonic() - started:.2f}")
print(len(pokes))
if watcher is not None:
    watcher.close()
"""


def _sleep(mode: str, sent: str = "SIGUSR1") -> tuple[str, float, int]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode, sent], cwd=REPO,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    how, seconds, lossy_pokes = done.stdout.split()
    return how, float(seconds), int(lossy_pokes)


@pytest.mark.parametrize("sent", ["SIGUSR1", "SIGINT"])
def test_a_signal_another_thread_received_ends_the_main_threads_sleep_at_once(sent):
    how, seconds, _ = _sleep("watched", sent)

    assert how == "interrupted" and seconds < 2.0, (how, seconds)


def test_pokes_that_are_lost_are_sent_again_until_the_handler_ran():
    how, seconds, pokes = _sleep("lossy")

    assert how == "interrupted" and seconds < 2.0, (how, seconds)
    assert pokes == 4, pokes  # three lost, the fourth interrupted the sleep, no more after


@pytest.mark.parametrize("sent", ["SIGUSR1", "SIGINT"])
def test_without_the_watcher_the_same_signal_waits_the_sleep_out(sent):
    how, seconds, _ = _sleep("unwatched", sent)

    assert seconds == pytest.approx(3.0, abs=0.5), (how, seconds)


def test_installed_only_from_the_main_thread():
    import threading

    from service.runs.exit_signals import prompt_exit_signals

    got = []
    thread = threading.Thread(target=lambda: got.append(prompt_exit_signals()))
    thread.start()
    thread.join()
    assert got == [None]
