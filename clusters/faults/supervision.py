"""A process fault's intent on a supervised daemon, and what its restore finds.

A process fault names what it means to do to the daemon:
- `crash`: SIGKILL it, as a crash would. Its supervisor may start it again, as it would in
  production (Debian's ceph-osd@.service: Restart=on-failure, RestartSec=10). The restore
  says whether and when it came back and how often (systemd's NRestarts, a new MainPID),
  and starts it itself only if nothing did.
- `down`: stop it and keep it stopped until the restore, whatever supervises it. For a
  pid-file daemon that is a SIGKILL (nothing restarts it: today's kill). For a systemd or
  cephadm unit: `systemctl mask --runtime` (nothing may start it), `systemctl kill
  --signal=SIGKILL` (it dies as in a crash), `systemctl stop` (the pending automatic
  restart is cancelled); the restore undoes exactly that: `unmask --runtime`,
  `reset-failed`, `start`. A daemon found running again at the restore was brought back
  while the experiment wanted it down: the restore says so (`deviation`) and the run is
  not a valid `down` run.

`down` is the default: it is what a "kill" has always meant here (the lab's pid-file
daemons are restarted by nothing), and an experiment that keeps an OSD dead while Ceph
re-replicates must not silently measure a 10-second crash on a systemd host.

Service kinds (inventory `managed_by`): `pid_file`, `systemd` (its `unit`) and `cephadm`
(the unit `ceph-<fsid>@<daemon>.service`). cephadm runs each daemon with podman
`--cgroups=split`, so the daemon lives in its unit's cgroup and the same systemctl path
reaches it; that path was not run against a real cephadm host (no podman here).

What was done (`prepare`) is written to the fault ledger as the entry's record, so
`faultline heal` replays the exact undo after the run itself was killed; the restore takes
it from the ledger only, and only once `checked_record` found it about the inventory's
daemon and unit.
"""

from __future__ import annotations

import contextlib
import shlex
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clusters.access import services
from clusters.access.inventory import Cluster, Service
from clusters.exceptions import RemoteCommandFailed
from clusters.polling import PollTimeout, poll_until

INTENTS = ("crash", "down")
DEFAULT_INTENT = "down"
UNIT_SUFFIXES = (".service", ".scope", ".socket", ".target", ".mount", ".timer")
# a crashed unit waits RestartSec (10 s in Debian's Ceph units) before it is started again;
# a restore that comes sooner gives its supervisor this long before starting it itself
SUPERVISOR_WAIT_S = 30.0
PROPERTIES = ("LoadState", "ActiveState", "SubState", "MainPID", "NRestarts",
              "ExecMainStartTimestamp")


@dataclass(frozen=True)
class UnitState:
    """What systemd says about a unit at one moment."""

    load_state: str
    active_state: str
    sub_state: str
    main_pid: int
    n_restarts: int
    started_at: float | None  # epoch seconds its current main process was started

    @property
    def running(self) -> bool:
        return self.main_pid > 0 and self.active_state in ("active", "reloading",
                                                           "deactivating")


def check_intent(intent: str) -> str:
    if intent not in INTENTS:
        raise ValueError(f"intent must be one of {', '.join(INTENTS)}, not {intent!r}")
    return intent


def unit_name(name: str) -> str:
    """A unit's full name: systemctl appends .service to a name with no unit suffix (and
    cephadm's instance names hold dots: ceph-<fsid>@osd.3)."""
    return name if name.endswith(UNIT_SUFFIXES) else f"{name}.service"


def unit_of(cluster: Cluster, service: Service) -> str | None:
    """The systemd unit that supervises the service; None for a pid-file daemon."""
    if service.supervisor == "pid_file":
        return None
    if service.unit:
        return unit_name(service.unit)
    if service.supervisor == "cephadm":
        return cephadm_unit(str(cluster.client.get("fsid") or ""), service.name)
    raise RemoteCommandFailed(f"{service.name} is managed by {service.supervisor} but the "
                              "inventory names no unit")


def cephadm_unit(fsid: str, daemon: str) -> str:
    """cephadm's unit of a daemon: ceph-<fsid>@<type>.<id>.service."""
    if not fsid or not daemon:
        raise ValueError("a cephadm unit needs the cluster's fsid and the daemon's name")
    return f"ceph-{fsid}@{daemon}.service"


def _timestamp(value: str) -> float | None:
    """systemctl's `--timestamp=us+utc` form: 'Thu 2026-11-26 00:02:27.123456 UTC'."""
    try:
        return datetime.strptime(value.strip(), "%a %Y-%m-%d %H:%M:%S.%f UTC").replace(
            tzinfo=UTC).timestamp()
    except ValueError:
        return None


def parse_show(text: str) -> UnitState:
    """A UnitState from `systemctl show -p ...` output (KEY=VALUE lines)."""
    props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def number(key: str) -> int:
        value = props.get(key) or "0"
        return int(value) if value.isdigit() else 0

    return UnitState(load_state=props.get("LoadState", ""),
                     active_state=props.get("ActiveState", ""),
                     sub_state=props.get("SubState", ""), main_pid=number("MainPID"),
                     n_restarts=number("NRestarts"),
                     started_at=_timestamp(props.get("ExecMainStartTimestamp", "")))


def unit_state(cluster: Cluster, service: Service, unit: str) -> UnitState:
    props = ",".join(PROPERTIES)
    out = services.run(cluster, service, f"systemctl show --timestamp=us+utc -p {props} "
                                         f"{shlex.quote(unit)}", timeout=30).stdout
    state = parse_show(out)
    if state.load_state not in ("loaded", "masked"):  # masked: by a `down` fault
        where = service.node or "this machine"
        raise RemoteCommandFailed(f"unit {unit} of {service.name} does not exist on {where} "
                                  f"(LoadState={state.load_state or '?'})")
    return state


def prepare(cluster: Cluster, service: Service, intent: str) -> dict[str, Any]:
    """What the fault will do, from the daemon's state now: the ledger's record of it, and
    what `inject` and `restore` are given. Raises if the daemon is not running."""
    check_intent(intent)
    unit = unit_of(cluster, service)
    details: dict[str, Any] = {"daemon": service.name, "intent": intent,
                               "supervisor": service.supervisor, "unit": unit}
    if unit is None:
        pid = services.pid_of(cluster, service)
        restarts = None
    else:
        state = unit_state(cluster, service, unit)
        pid, restarts = (state.main_pid if state.running else None), state.n_restarts
    if pid is None:
        raise RemoteCommandFailed(f"{service.name} is not running on "
                                  f"{service.node or 'this machine'}")
    details.update(pid=pid, restarts_before=restarts, masked=unit is not None
                   and intent == "down", killed_at=round(time.time(), 3))
    return details


def describe(details: dict[str, Any], node: str | None) -> str:
    """One line for the ledger and `faultline heal`."""
    name, where = details["daemon"], f" on {node}" if node else ""
    if details["intent"] == "crash" and details["unit"]:
        return f"{name} crashed (SIGKILL; {details['unit']} may restart it){where}"
    if details["unit"]:
        return f"{name} killed (SIGKILL) and kept down ({details['unit']} masked){where}"
    return f"{name} killed (SIGKILL){where}"


def inject(cluster: Cluster, service: Service, details: dict[str, Any]) -> dict[str, Any]:
    """Do what `prepare` planned; returns what the fault action reports."""
    unit = details["unit"]
    if unit is None:
        pid = services.kill(cluster, service, "KILL")
        return {"pid": pid, "intent": details["intent"], "supervisor": "pid_file"}
    quoted = shlex.quote(unit)
    if details["intent"] == "crash":
        services.run(cluster, service, f"systemctl kill --signal=SIGKILL {quoted}")
        return {"pid": details["pid"], "intent": "crash", "unit": unit,
                "supervisor": details["supervisor"]}
    services.run(cluster, service, f"systemctl mask --runtime {quoted} && "
                                   f"systemctl kill --signal=SIGKILL {quoted} && "
                                   f"systemctl stop {quoted}")
    state = unit_state(cluster, service, unit)
    if state.running:
        raise RemoteCommandFailed(f"{unit} still runs (PID {state.main_pid}) after kill, "
                                  "mask and stop")
    return {"pid": details["pid"], "intent": "down", "unit": unit,
            "supervisor": details["supervisor"], "state": state.active_state}


def checked_record(cluster: Cluster, service: Service,
                   details: Any) -> dict[str, Any] | None:
    """The ledger's record of a process fault on `service` (None: there is none), once it is
    seen to be about this daemon as the inventory describes it: its name, its supervisor and
    its unit (the restore runs `systemctl start` on that unit); ValueError saying what
    differs otherwise."""
    if details is None:
        return None
    if not isinstance(details, dict):
        raise ValueError(f"is not a process fault's record ({type(details).__name__})")
    expected = {"daemon": service.name, "supervisor": service.supervisor,
                "unit": unit_of(cluster, service)}
    for name, value in expected.items():
        if details.get(name) != value:
            raise ValueError(f"names {name} {details.get(name)!r}, not the inventory's "
                             f"{value!r} of {service.name}")
    if details.get("intent") not in INTENTS:
        raise ValueError(f"names intent {details.get('intent')!r}, not one of "
                         f"{', '.join(INTENTS)}")
    for name in ("pid", "restarts_before"):
        value = details.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"names {name} {value!r}, not a whole number")
    return details


def restarting(state: UnitState, killed_pid: int | None) -> bool:
    """The supervisor is still at it: the killed process not reaped yet, or the unit waiting
    out RestartSec ("auto-restart", "auto-restart-queued" since systemd 254) or running its
    ExecStartPre (ActiveState "activating")."""
    if state.running:
        return state.main_pid == killed_pid
    return state.active_state == "activating" or state.sub_state.startswith("auto-restart")


def _wait_for_supervisor(cluster: Cluster, service: Service, unit: str, killed_pid: int | None,
                         wait_s: float) -> UnitState:
    """The unit's state once its supervisor restarted it, or gave up, or `wait_s` passed."""
    state: UnitState | None = None

    def settled() -> bool:
        nonlocal state
        state = unit_state(cluster, service, unit)
        return not restarting(state, killed_pid)
    with contextlib.suppress(PollTimeout):  # then the state as it is after wait_s
        poll_until(f"{unit} restarted or given up", settled, wait_s, 0.5)
    return state


def _brought_back(state: UnitState, details: dict[str, Any]) -> str | None:
    """Why the daemon counts as brought back since the fault, or None."""
    seen = []
    if state.running and state.main_pid != details.get("pid"):
        seen.append(f"running as PID {state.main_pid}")
    before = details.get("restarts_before")
    if before is not None and state.n_restarts > before:
        seen.append(f"NRestarts {before} -> {state.n_restarts}")
    return ", ".join(seen) or None


def _start_unit(cluster: Cluster, service: Service, unit: str, unmask: bool) -> None:
    quoted = shlex.quote(unit)
    steps = ([f"systemctl unmask --runtime {quoted}"] if unmask else []) + [
        f"{{ systemctl reset-failed {quoted} || true; }}", f"systemctl start {quoted}"]
    services.run(cluster, service, " && ".join(steps), timeout=120)


def restore(cluster: Cluster, service: Service, details: dict[str, Any] | None,
            wait_s: float = SUPERVISOR_WAIT_S) -> dict[str, Any]:
    """Undo a process fault (idempotent) and say what was found: for `crash`, whether and
    when the supervisor brought the daemon back; for `down`, a `deviation` if anything did.
    Without a record of the fault, only start the daemon if it is not running."""
    outcome: dict[str, Any] = {"daemon": service.name, "node": service.node,
                               "intent": (details or {}).get("intent"),
                               "supervisor": service.supervisor, "started_by_restore": False,
                               "came_back_at": None, "came_back_after_s": None,
                               "restarts": None, "deviation": None}
    unit = unit_of(cluster, service)  # the inventory's: a record may only agree with it
    if unit is None:
        pid = services.pid_of(cluster, service)
        if details and pid is not None and pid != details.get("pid"):
            outcome["restarts"] = 1  # at least once; a pid file does not count them
            if details["intent"] == "down":
                outcome["deviation"] = (f"{service.name} was running again (PID {pid}) "
                                        "before the restore, though the fault wanted it down")
        if pid is None:
            services.start(cluster, service)
            outcome["started_by_restore"] = True
        outcome["pid"] = services.pid_of(cluster, service)
        return outcome
    intent = (details or {}).get("intent")
    state = (_wait_for_supervisor(cluster, service, unit, details.get("pid"), wait_s)
             if intent == "crash"
             else unit_state(cluster, service, unit))
    back = _brought_back(state, details) if details else None
    if back and state.started_at and details.get("killed_at"):
        outcome["came_back_at"] = state.started_at
        outcome["came_back_after_s"] = round(state.started_at - details["killed_at"], 1)
    if back and details.get("restarts_before") is not None:
        outcome["restarts"] = state.n_restarts - details["restarts_before"]
    if back and intent == "down":
        outcome["deviation"] = (f"{service.name} was brought back while the fault wanted it "
                                f"down ({back}; {unit} is supervised by "
                                f"{service.supervisor})")
    if not state.running or (details or {}).get("masked"):
        _start_unit(cluster, service, unit, unmask=bool((details or {}).get("masked")))
        outcome["started_by_restore"] = not state.running
    outcome["pid"] = unit_state(cluster, service, unit).main_pid or None
    return outcome
