"""What an experiment's faults take down on a cluster, in words, before anything runs.

The trigger form's confirmation names the blast radius: for each fault action of the
experiment's method, what it does ("kills osd.1 on node2"), what that takes down in the
guard's terms (OSDs for Ceph, "<ring>:<node>/<device>" keys for Swift, as
actions.safety.taken_down works them out from the inventory) and how it is restored.
Static: from the experiment and the inventory only, no call to the cluster (which may be
busy with another run's fault). Each action module describes its own faults and names
their restores (actions.fault_spec); this module puts them in the experiment's order. The
live judgement is the guard's, when the fault action runs (clusters/safety/guard.py): it
refuses a fault that would leave data unavailable or on its last copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from actions import fault_spec
from actions.safety import taken_down
from clusters.access.inventory import Cluster
from clusters.exceptions import ClusterError

GUARD_NOTE = ("Before injecting, the guard checks what the fault takes down against where "
              "the copies are and what is down already, and refuses it if data would be left "
              "unavailable or on its last copy.")
# restore actions: described as the way back, not as faults
RESTORES = fault_spec.restores()
# actions that watch a fault rather than inject one: neither a fault nor its way back
WATCHES = fault_spec.watches()


@dataclass(frozen=True)
class FaultScope:
    activity: str  # the activity's name in the experiment, e.g. "kill-osd"
    action: str  # "actions.ceph.kill_osd"
    arguments: dict[str, Any]
    says: str  # "kills osd.1 on node2 (SIGKILL)"
    takes_down: tuple[str, ...] = ()  # "osd.1", "object:node1/d1"
    held_s: float | None = None  # the pause after it, before the method goes on
    restore: str | None = None  # "start-osd: actions.ceph.start_osd(osd_id=1)"
    override: bool = False  # allow_unavailable: injected even if the guard refuses
    problem: str | None = None  # the inventory does not have what it names


def fault_scopes(experiment: dict[str, Any], cluster: Cluster) -> list[FaultScope]:
    """One scope per fault action of the experiment's method, in order."""
    method = experiment.get("method") or []
    # the method's own restore first, else the rollback's (a fill is removed in a rollback)
    restores = [a for a in method + (experiment.get("rollbacks") or [])
                if _func(a) in RESTORES]
    scopes = []
    for activity in method:
        func = _func(activity)
        if activity.get("type") != "action" or func is None or func in RESTORES | WATCHES:
            continue
        provider = activity["provider"]
        arguments = dict(provider.get("arguments") or {})
        action = fault_spec.action_of(activity)
        try:
            if action is None:
                raise ClusterError(f"{provider['module']}.{func} is not a fault Faultline has")
            scope = action.scope(cluster, arguments)
            down_osds, down_keys = taken_down(cluster, list(scope.nodes), set(scope.osds),
                                              set(scope.keys))
            says = scope.says
            takes = tuple([f"osd.{o}" for o in sorted(down_osds)] + sorted(down_keys))
            problem = None
        except ClusterError as exc:
            says, takes, problem = f"{func.replace('_', ' ')} {_args(arguments)}", (), str(exc)
        scopes.append(FaultScope(
            activity=str(activity.get("name")), action=f"{provider['module']}.{func}",
            arguments=arguments, says=says, takes_down=takes,
            held_s=(activity.get("pauses") or {}).get("after"),
            restore=_restore_of(action, restores),
            override=bool(arguments.get("allow_unavailable")), problem=problem))
    return scopes


def _func(activity: dict[str, Any]) -> str | None:
    provider = activity.get("provider") or {}
    if provider.get("type") != "python" or not str(provider.get("module")).startswith("actions."):
        return None
    return provider.get("func")


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in arguments.items() if k != "allow_unavailable")


def _restore_of(action: fault_spec.Action | None, restores: list[dict]) -> str | None:
    for activity in restores:
        if action is not None and _func(activity) == action.fault.restore:
            provider = activity["provider"]
            return (f"{activity.get('name')}: {provider['module']}.{provider['func']}"
                    f"({_args(provider.get('arguments') or {})})")
    return None
