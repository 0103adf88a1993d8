"""ThreadStates keeps the Python thread state of a thread Python did not start (as
librados' finisher is), and gives it back: checked on a real pthread made through libc,
whose Python state is seen to live or go by a thread-local value's finalizer."""

import ctypes
import threading
import weakref

from loadgen.thread_state import ThreadStates

libc = ctypes.CDLL(None)
START = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)


def run_foreign(body) -> None:
    """Run body() once on a new pthread (ctypes takes the GIL for it with
    PyGILState_Ensure, as python-rados' callbacks do) and wait for the thread to end."""
    def start(_arg):
        body()
        return None

    routine = START(start)
    tid = ctypes.c_ulong()
    assert libc.pthread_create(ctypes.byref(tid), None, routine, None) == 0
    assert libc.pthread_join(tid, None) == 0


class Marker:
    pass


def marked_state(local: threading.local, gone: threading.Event) -> None:
    """Put a value in this thread's thread-local dict: it is freed with the thread's state."""
    marker = Marker()
    weakref.finalize(marker, gone.set)
    local.marker = marker


def test_a_foreign_threads_state_is_deleted_after_each_callback_without_keeping():
    local, gone = threading.local(), threading.Event()

    run_foreign(lambda: marked_state(local, gone))

    assert gone.is_set()


def test_keep_leaves_the_foreign_threads_state_alive_after_the_callback():
    local, gone, states = threading.local(), threading.Event(), ThreadStates()

    def body():
        states.keep()
        marked_state(local, gone)

    run_foreign(body)

    assert not gone.is_set()
    assert len(states.held) == 1


def test_give_back_lets_the_state_go_when_the_callback_returns():
    local, gone, states = threading.local(), threading.Event(), ThreadStates()

    def body():
        states.keep()
        states.keep()  # a second keep on the same thread takes no second hold
        marked_state(local, gone)
        assert states.give_back()

    run_foreign(body)

    assert gone.is_set()
    assert states.held == set()


def test_give_back_on_a_thread_that_holds_nothing_does_nothing():
    states = ThreadStates()

    assert states.give_back() is False
