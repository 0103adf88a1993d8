"""The `python -m lab.<system> up | down [--purge] | status` command line of each lab."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from typing import Any


def main(system: str, up: Callable[[], Any], down: Callable[..., Any],
         status: Callable[[], Any], argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if args[:1] == ["up"]:
        print(json.dumps(up(), indent=2))
    elif args[:1] == ["down"]:
        print(json.dumps(down(purge="--purge" in args), indent=2))
    elif args[:1] == ["status"]:
        print(json.dumps(status(), indent=2))
    else:
        print(f"usage: python -m lab.{system} up | down [--purge] | status", file=sys.stderr)
        return 2
    return 0
