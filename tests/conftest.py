"""Fixtures both test trees use."""

import signal

import pytest


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler, whatever the tests were started with (CI, or a shell's
    background job, ignores SIGINT)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)
