"""Stand-ins for the fault ledger and heal tests: restores that record their calls (the
module `actions.fake_restore`, registered in sys.modules only), and ledger entries."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import types
import uuid
from typing import Any

import pytest

from clusters.safety.fault_ledger import FaultEntry

MODULE = "actions.fake_restore"
UNREACHABLE = "node2 (10.0.0.2:22) is unreachable"


def install(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict, dict]]:
    """Register `actions.fake_restore` with `start` (succeeds) and `broken` (raises);
    return the list their calls are appended to: (function, arguments, configuration)."""
    calls: list[tuple[str, dict, dict]] = []
    module = types.ModuleType(MODULE)

    def start(configuration: dict = None, **arguments: Any) -> dict:
        calls.append(("start", arguments, configuration))
        return {"started": sorted(arguments.values())}

    def broken(configuration: dict = None, **arguments: Any) -> dict:
        calls.append(("broken", arguments, configuration))
        raise RuntimeError(UNREACHABLE)

    module.start, module.broken = start, broken
    monkeypatch.setitem(sys.modules, MODULE, module)
    return calls


def unique_cluster() -> str:
    """A cluster name no other test (nor the lab) uses, so healing touches only our faults."""
    return f"test-{uuid.uuid4().hex[:10]}"


def dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def fault(cluster: str, key: str, *, at: float, restore: str = f"{MODULE}.start",
          pid: int | None = None, arguments: dict | None = None,
          run_id: int | None = None, record: dict | None = None) -> FaultEntry:
    """An entry injected at `at` by `pid` on this host (default: this process, alive)."""
    return FaultEntry(id=uuid.uuid4().hex, cluster=cluster, key=key,
                      description=f"{key.split(':')[1]} broken", restore=restore,
                      arguments={"target": key} if arguments is None else arguments,
                      injected_at=at, owner_pid=os.getpid() if pid is None else pid,
                      owner_host=socket.gethostname(), run_id=run_id, record=record or {})
