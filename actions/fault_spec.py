"""What each fault action says of itself, declared in its own module beside its
`check_arguments` (a `FAULTS` mapping from the action's function name to a `Fault`):
- the action that restores it;
- what it does and takes down, in words, from the inventory alone (no call to the cluster,
  which may be busy with another run's fault): the trigger form's confirmation and the
  experiment page read it through service.experiments.fault_scope;
- what a report says of that class of fault on each system.

A scope function gets the activity's arguments bound to the action's own signature, its
defaults applied, so no default is written twice; an argument the action does not take is
a problem of the experiment, said as such."""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from chaoslib.exceptions import ActivityFailed

from clusters.access.inventory import Cluster
from clusters.exceptions import ClusterError

from . import ACTION_MODULES

SIGSTOP = "(SIGSTOP: alive, answering nothing, until resumed)"


@dataclass(frozen=True)
class Scope:
    says: str  # "kills osd.1 on node2 (SIGKILL)"
    nodes: tuple[str, ...] = ()  # whole nodes it takes
    osds: frozenset[int] = frozenset()
    keys: frozenset[str] = frozenset()  # Swift "<ring>:<node>/<device>"


@dataclass(frozen=True)
class Fault:
    restore: str  # the function of the same module that undoes it
    scope: Callable[[Cluster, dict[str, Any]], Scope]
    notes: Mapping[str, str] = field(default_factory=dict)  # by cluster kind
    takes_down: bool = True  # False: it adds capacity (a scale action), no failure to time


@dataclass(frozen=True)
class Action:
    module: str  # "actions.ceph"
    func: str  # "kill_osd"
    fault: Fault

    def scope(self, cluster: Cluster, arguments: dict[str, Any]) -> Scope:
        """What it takes down with these arguments; ClusterError names a problem of them."""
        action = getattr(importlib.import_module(self.module), self.func)
        try:
            bound = inspect.signature(action).bind(**arguments)
        except TypeError as exc:
            raise ClusterError(f"{self.func}: {exc}") from None
        bound.apply_defaults()
        try:
            return self.fault.scope(cluster, dict(bound.arguments))
        except ActivityFailed as exc:  # the action's own check of its arguments
            raise ClusterError(str(exc)) from None


def where(node: str | None) -> str:
    return f"on {node}" if node else "on the Faultline machine"


def whole_number(name: str, value: Any, low: int, what: str) -> int:
    """A document's number that must be an integer of at least `low`."""
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ClusterError(f"{name} must be {what}, not {value!r}")
    return value


@functools.cache
def fault_actions() -> dict[tuple[str, str], Action]:
    """Every fault of Faultline's action modules, by (module, function)."""
    found = {}
    for name in ACTION_MODULES:
        for func, fault in getattr(importlib.import_module(name), "FAULTS", {}).items():
            found[(name, func)] = Action(name, func, fault)
    return found


def restores() -> frozenset[str]:
    """The functions that undo a fault: the way back, never a fault themselves."""
    return frozenset(a.fault.restore for a in fault_actions().values())


def watches() -> frozenset[str]:
    """Functions that watch a fault rather than inject or undo one (each module's
    `WATCHES`)."""
    return frozenset(func for name in ACTION_MODULES
                     for func in getattr(importlib.import_module(name), "WATCHES", ()))


def action_of(activity: Any) -> Action | None:
    """The fault action an experiment's activity calls, if it calls one."""
    provider = activity.get("provider") if isinstance(activity, dict) else None
    if not isinstance(provider, dict) or provider.get("type") != "python":
        return None
    return fault_actions().get((str(provider.get("module")), str(provider.get("func"))))
