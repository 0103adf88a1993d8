"""Swift's ring and builder files, read without running what a hostile file would carry.

A pickle can name any callable, so unpickling a file runs whatever its writer chose. Swift
2.30 falls back to pickle for a ring file without the "R1NG" magic (rings older than Swift
1.x), and writes its builder files as pickles. Every child process of Faultline that
imports Swift calls `forbid_pickle()` first:
- a ring file (`*.ring.gz`) is read only in the R1NG format (JSON and arrays); a pickled
  ring is refused with the fix (`swift-ring-builder <ring>.builder write_ring`);
- a builder file (a pickle in every Swift release; there is no JSON form of it) is read by
  an unpickler that resolves one global, `array.array`, which is all a builder holds
  (measured on a builder Swift 2.30 wrote: its only GLOBAL is `array array`); any other
  global refuses the file before anything of it runs.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import sys
from collections.abc import Callable
from typing import Any, NoReturn

RING_MAGIC = b"R1NG"
BUILDER_GLOBALS = {("array", "array")}


class RingFileRefused(Exception):
    """A ring or builder file Faultline will not read; the message names it and why."""


class _BuilderUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in BUILDER_GLOBALS:
            raise RingFileRefused(
                f"it names {module}.{name}, which no ring builder holds (only array.array)")
        return super().find_class(module, name)


def load_builder_dict(fp: Any) -> Any:
    """A builder file's content, resolving no global but array.array."""
    name = _file_name(fp)
    try:
        return _BuilderUnpickler(fp).load()
    except RingFileRefused as exc:
        raise RingFileRefused(f"refusing the Swift ring builder {name}: {exc}") from None


class _PickleForRings:
    """Stands in for the `pickle` module inside Swift's ring code."""

    def __init__(self, load) -> None:
        self.load = load
        self.dump, self.dumps = pickle.dump, pickle.dumps  # saving a builder stays as Swift's


def _file_name(fp: Any) -> str:
    inner = getattr(fp, "fp", fp)  # Swift's RingReader wraps the open file
    return str(getattr(inner, "name", None) or "file")


def _refuse_pickled_ring(fp: Any) -> Any:
    raise RingFileRefused(
        f"refusing the Swift ring {_file_name(fp)}: it is a pickle "
        "(the pre-R1NG format), and unpickling runs whatever its writer put in it; write it "
        "again with `swift-ring-builder <ring>.builder write_ring`")


def forbid_pickle() -> None:
    """Make Swift's ring module refuse pickled rings and its builder load only plain data.
    Call it in the child process, right after importing Swift and before loading a ring."""
    from swift.common.ring import builder, ring

    ring.pickle = _PickleForRings(_refuse_pickled_ring)
    builder.pickle = _PickleForRings(load_builder_dict)


def check_builder_file(path: str) -> None:
    """RingFileRefused naming the builder and the global it names, if it names any but
    array.array (Swift's own load would only say "Ring Builder file is invalid")."""
    try:
        with open(path, "rb") as fp:
            load_builder_dict(fp)
    except RingFileRefused:
        raise
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError) as exc:
        raise RingFileRefused(f"cannot read the Swift ring builder {path}: {exc}") from None


def answer(produce: Callable[[], Any]) -> NoReturn:
    """The main of a child process that reads rings: print what `produce` returns as JSON,
    or one line saying why it failed (a ring or builder refused), and leave without the
    interpreter's teardown, where eventlet's greenlets complain last and hide the reason."""
    try:
        out = json.dumps(produce())
    except Exception as exc:  # noqa: BLE001 - whatever Swift raises, one line for the parent
        said = str(exc) if isinstance(exc, RingFileRefused) else f"{type(exc).__name__}: {exc}"
        print(said, file=sys.stderr, flush=True)
        os._exit(2)
    print(out, flush=True)
    os._exit(0)


def is_r1ng(path: str) -> bool:
    """Whether a ring file is in the R1NG format (gzip, then the magic)."""
    with gzip.open(path, "rb") as fp:
        return fp.read(len(RING_MAGIC)) == RING_MAGIC


def check_ring_file(path: str) -> None:
    """RingFileRefused unless the file at `path` is an R1NG ring."""
    try:
        ok = is_r1ng(path)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise RingFileRefused(f"cannot read the Swift ring {path}: {exc}") from None
    if not ok:
        named = io.BytesIO()
        named.name = path  # type: ignore[attr-defined]
        _refuse_pickled_ring(named)


__all__ = ["RingFileRefused", "answer", "check_builder_file", "check_ring_file",
           "forbid_pickle", "load_builder_dict"]
