"""A process fault's intent on supervised daemons (clusters/faults/supervision.py): unit names,
what systemctl says, what the fault does and what its restore reports. systemctl is played
by a small in-memory systemd that answers the very commands the module sends."""

from __future__ import annotations

import re
import time

import pytest
from chaoslib.exceptions import ActivityFailed

from actions import swift
from actions.ceph import check_arguments
from clusters.access.inventory import Cluster, Node, Service, parse_inventory
from clusters.access.ssh import CommandResult
from clusters.exceptions import InventoryError, RemoteCommandFailed
from clusters.faults import supervision
from service.results.report import daemon_outcome_lines

FSID = "3f1c2f6e-8c1e-4c8a-9a55-0d7d4a4f2b10"


def cluster(*services: Service, client: dict | None = None) -> Cluster:
    return Cluster(name="prod", kind="ceph", nodes=(Node("node2", "10.0.0.12"),),
                   services=services, client=client or {"conf": "/etc/ceph/ceph.conf"})


OSD1 = Service("osd.1", "osd", "node2", unit="ceph-osd@1", managed_by="systemd")


# -- names --------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "full"), [
    ("ceph-osd@1", "ceph-osd@1.service"),
    ("ceph-osd@1.service", "ceph-osd@1.service"),
    (f"ceph-{FSID}@osd.3", f"ceph-{FSID}@osd.3.service"),  # the instance's dot is no suffix
])
def test_unit_name_appends_service_as_systemctl_does(name, full):
    assert supervision.unit_name(name) == full


def test_a_cephadm_daemon_without_a_unit_gets_cephadms_unit_from_the_fsid():
    osd = Service("osd.3", "osd", "node2", managed_by="cephadm")
    assert supervision.unit_of(cluster(osd, client={"conf": "c", "fsid": FSID}), osd) == \
        f"ceph-{FSID}@osd.3.service"


def test_a_cephadm_unit_named_in_the_inventory_wins():
    osd = Service("osd.3", "osd", "node2", unit=f"ceph-{FSID}@osd.3", managed_by="cephadm")
    assert supervision.unit_of(cluster(osd), osd) == f"ceph-{FSID}@osd.3.service"


def test_a_pid_file_daemon_has_no_unit():
    osd = Service("osd.0", "osd", "node2", pid_file="/run/ceph-osd.0.pid")
    assert osd.supervisor == "pid_file"
    assert supervision.unit_of(cluster(osd), osd) is None


def test_a_service_with_a_unit_is_managed_by_systemd_by_default():
    assert Service("mon.a", "mon", None, unit="ceph-mon@a").supervisor == "systemd"


@pytest.mark.parametrize(("service", "message"), [
    ({"name": "osd.1", "kind": "osd", "node": "node1", "managed_by": "runit", "unit": "x"},
     "service osd.1: managed_by must be one of pid_file, systemd, cephadm, not 'runit'"),
    ({"name": "osd.1", "kind": "osd", "node": "node1", "managed_by": "cephadm"},
     "service osd.1 (cephadm) needs a unit or the cluster's client.fsid"),
    ({"name": "osd.1", "kind": "osd", "node": "node1", "managed_by": "systemd",
      "pid_file": "/p"}, "service osd.1 (systemd) needs a unit"),
    ({"name": "osd.1", "kind": "osd", "node": "node1"}, "service osd.1 needs a pid_file or a unit"),
])
def test_the_inventory_refuses_a_service_its_manager_cannot_reach(service, message):
    raw = {"clusters": {"c": {"kind": "ceph", "client": {"conf": "/c"},
                              "nodes": [{"name": "node1", "address": "10.0.0.1"}],
                              "services": [service]}}}
    with pytest.raises(InventoryError) as caught:
        parse_inventory(raw)
    assert f"cluster 'c': {message}" in str(caught.value)


def test_a_cephadm_service_needs_no_unit_when_the_cluster_has_an_fsid():
    raw = {"clusters": {"c": {"kind": "ceph", "client": {"conf": "/c", "fsid": FSID},
                              "nodes": [{"name": "node1", "address": "10.0.0.1"}],
                              "services": [{"name": "osd.1", "kind": "osd", "node": "node1",
                                            "managed_by": "cephadm"}]}}}
    assert parse_inventory(raw)["c"].service("osd.1").supervisor == "cephadm"


def test_an_unknown_intent_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="intent must be one of crash, down, not 'stop'"):
        supervision.check_intent("stop")


# -- systemctl show ----------------------------------------------------------------------


def test_parse_show_reads_state_pid_restarts_and_start_time():
    state = supervision.parse_show(
        "LoadState=loaded\nActiveState=active\nSubState=running\nMainPID=568\nNRestarts=1\n"
        "ExecMainStartTimestamp=Thu 2026-11-26 00:18:40.752094 UTC\n")
    assert (state.running, state.main_pid, state.n_restarts) == (True, 568, 1)
    assert state.started_at == pytest.approx(1795652320.752094)


def test_parse_show_of_a_stopped_unit_has_no_pid_and_no_start():
    state = supervision.parse_show("LoadState=masked\nActiveState=failed\nSubState=failed\n"
                                   "MainPID=0\nNRestarts=0\nExecMainStartTimestamp=\n")
    assert (state.running, state.started_at, state.load_state) == (False, None, "masked")


# -- the fault and its restore, against an in-memory systemd -----------------------------------


class FakeSystemd:
    """One unit under systemd's rules: Restart=on-failure brings a SIGKILLed main process back
    (at once here), a masked unit is never started, stop cancels a pending restart."""

    def __init__(self, restart: bool = True):
        self.restart = restart
        self.pid, self.restarts, self.masked, self.active = 100, 0, False, "active"
        self.next_pid = 101
        self.started_at = time.time() - 60
        self.commands: list[str] = []

    def _start(self) -> None:
        self.pid, self.active, self.started_at = self.next_pid, "active", time.time()
        self.next_pid += 1

    def run(self, _cluster, _service, command: str, timeout: float = 60.0,
            check: bool = True) -> CommandResult:
        self.commands.append(command)
        for step in command.split(" && "):
            verb = re.sub(r"[{}]|\|\| true;?", "", step).split()[1]
            if verb == "show":
                return CommandResult(0, self._show(), "")
            if verb == "kill":
                self.pid, self.active = 0, "failed"
                if self.restart and not self.masked:
                    self.restarts += 1
                    self._start()
            elif verb == "mask":
                self.masked = True
            elif verb == "unmask":
                self.masked = False
            elif verb == "stop":
                self.pid, self.active = 0, "failed" if self.active == "failed" else "inactive"
            elif verb == "start":
                if self.masked:
                    raise RemoteCommandFailed("Unit ceph-osd@1.service is masked.")
                if not self.pid:
                    self._start()
        return CommandResult(0, "", "")

    def _show(self) -> str:
        stamp = time.strftime("%a %Y-%m-%d %H:%M:%S", time.gmtime(self.started_at))
        return (f"LoadState={'masked' if self.masked else 'loaded'}\n"
                f"ActiveState={self.active}\nSubState={'running' if self.pid else 'failed'}\n"
                f"MainPID={self.pid}\nNRestarts={self.restarts}\n"
                f"ExecMainStartTimestamp={stamp}.{int(self.started_at % 1 * 1e6):06d} UTC\n")


@pytest.fixture
def systemd(monkeypatch) -> FakeSystemd:
    fake = FakeSystemd()
    monkeypatch.setattr(supervision.services, "run", fake.run)
    return fake


def test_down_masks_kills_and_stops_so_nothing_restarts_it(systemd):
    details = supervision.prepare(cluster(OSD1), OSD1, "down")
    assert (details["pid"], details["restarts_before"], details["masked"]) == (100, 0, True)
    supervision.inject(cluster(OSD1), OSD1, details)
    assert systemd.commands[-2] == ("systemctl mask --runtime ceph-osd@1.service && "
                                    "systemctl kill --signal=SIGKILL ceph-osd@1.service && "
                                    "systemctl stop ceph-osd@1.service")
    assert (systemd.pid, systemd.restarts) == (0, 0)


def test_the_restore_of_down_unmasks_and_starts_and_reports_no_deviation(systemd):
    details = supervision.prepare(cluster(OSD1), OSD1, "down")
    supervision.inject(cluster(OSD1), OSD1, details)
    outcome = supervision.restore(cluster(OSD1), OSD1, details)
    assert (outcome["deviation"], outcome["started_by_restore"]) == (None, True)
    assert not systemd.masked and systemd.pid == 101


def test_a_down_daemon_brought_back_before_the_restore_is_a_deviation(systemd):
    details = supervision.prepare(cluster(OSD1), OSD1, "down")
    supervision.inject(cluster(OSD1), OSD1, details)
    systemd.masked = False  # an operator unmasks and starts it
    systemd._start()
    outcome = supervision.restore(cluster(OSD1), OSD1, details)
    assert outcome["deviation"] == ("osd.1 was brought back while the fault wanted it down "
                                    "(running as PID 101; ceph-osd@1.service is supervised by "
                                    "systemd)")


def test_a_crash_reports_when_the_supervisor_brought_it_back_and_how_often(systemd):
    details = supervision.prepare(cluster(OSD1), OSD1, "crash")
    supervision.inject(cluster(OSD1), OSD1, details)
    outcome = supervision.restore(cluster(OSD1), OSD1, details, wait_s=0)
    assert (outcome["restarts"], outcome["pid"], outcome["deviation"]) == (1, 101, None)
    assert outcome["started_by_restore"] is False
    assert 0 <= outcome["came_back_after_s"] < 5


def test_a_crash_nothing_restarted_is_started_by_the_restore(systemd):
    systemd.restart = False
    details = supervision.prepare(cluster(OSD1), OSD1, "crash")
    supervision.inject(cluster(OSD1), OSD1, details)
    outcome = supervision.restore(cluster(OSD1), OSD1, details, wait_s=0)
    assert (outcome["started_by_restore"], outcome["restarts"], outcome["pid"]) == \
        (True, None, 101)


def test_a_fault_is_refused_on_a_unit_that_does_not_run(systemd):
    systemd.pid, systemd.active = 0, "inactive"
    with pytest.raises(RemoteCommandFailed, match="osd.1 is not running on node2"):
        supervision.prepare(cluster(OSD1), OSD1, "crash")


@pytest.mark.parametrize(("intent", "unit", "line"), [
    ("down", None, "osd.1 killed (SIGKILL) on node2"),
    ("down", "ceph-osd@1.service",
     "osd.1 killed (SIGKILL) and kept down (ceph-osd@1.service masked) on node2"),
    ("crash", "ceph-osd@1.service",
     "osd.1 crashed (SIGKILL; ceph-osd@1.service may restart it) on node2"),
])
def test_the_ledger_line_says_what_was_done(intent, unit, line):
    details = {"daemon": "osd.1", "intent": intent, "unit": unit}
    assert supervision.describe(details, "node2") == line


@pytest.mark.parametrize(("show", "waiting"), [
    ("ActiveState=active\nSubState=running\nMainPID=100\n", True),  # not reaped yet
    ("ActiveState=activating\nSubState=auto-restart\nMainPID=0\n", True),
    ("ActiveState=activating\nSubState=auto-restart-queued\nMainPID=0\n", True),
    ("ActiveState=activating\nSubState=start-pre\nMainPID=0\n", True),
    ("ActiveState=active\nSubState=running\nMainPID=101\n", False),  # back
    ("ActiveState=failed\nSubState=failed\nMainPID=0\n", False),  # given up (StartLimitBurst)
])
def test_the_restore_of_a_crash_waits_while_the_supervisor_is_restarting_it(show, waiting):
    assert supervision.restarting(supervision.parse_show(show), killed_pid=100) is waiting


def test_a_run_with_an_unknown_intent_is_refused_before_anything_runs():
    with pytest.raises(ActivityFailed, match="^intent must be one of crash, down, not 'stop'$"):
        check_arguments("kill_osd", {"osd_id": 1, "intent": "stop"}, cluster(OSD1))
    check_arguments("kill_osd", {"osd_id": 1, "intent": "crash"}, cluster(OSD1))


def test_a_swift_kill_with_an_unknown_intent_is_refused_before_anything_runs():
    proxy = Service("proxy-server", "proxy", None, pid_file="/run/proxy.pid")
    cluster = Cluster(name="s", kind="swift", nodes=(Node("node1", "10.0.0.1"),),
                      services=(proxy,))
    with pytest.raises(ActivityFailed, match="^intent must be one of crash, down, not 'x'$"):
        swift.check_arguments("kill_server", {"server": "proxy", "intent": "x"}, cluster)
    swift.check_arguments("kill_server", {"server": "proxy", "intent": "crash"}, cluster)


@pytest.mark.parametrize(("outcome", "line"), [
    ({"daemon": "osd.1", "intent": "crash", "supervisor": "systemd", "came_back_after_s": 10.4,
      "restarts": 1, "pid": 1498, "deviation": None},
     "osd.1 crashed and systemd brought it back 10.4 s after the kill (restarted 1 time(s), "
     "PID 1498)"),
    ({"daemon": "osd.1", "intent": "crash", "supervisor": "pid_file", "came_back_after_s": None,
      "started_by_restore": True, "deviation": None},
     "osd.1 crashed and nothing restarted it: the restore started it"),
    ({"daemon": "osd.2", "intent": "down", "supervisor": "systemd", "deviation": None},
     "osd.2 kept down (systemd unit masked) until the restore"),
    ({"daemon": "osd.1", "intent": "down", "supervisor": "systemd", "deviation": "osd.1 was "
      "brought back"}, "intent not kept: osd.1 was brought back"),
])
def test_the_report_says_what_the_restore_found(outcome, line):
    assert daemon_outcome_lines([outcome]) == [line]


def test_the_report_says_nothing_new_of_a_pid_file_daemon_kept_down():
    assert daemon_outcome_lines([{"daemon": "osd.1", "intent": "down",
                                  "supervisor": "pid_file", "deviation": None}]) == []


RESTARTING = "ActiveState=activating\nSubState=auto-restart\nMainPID=0\n"
BACK = "ActiveState=active\nSubState=running\nMainPID=101\n"


def _states(monkeypatch, shows: list[str]) -> list[int]:
    """unit_state answers these in turn (the last for ever); the list counts the asks."""
    asks: list[int] = []

    def unit_state(_cluster, _service, _unit):
        asks.append(1)
        return supervision.parse_show(shows[min(len(asks), len(shows)) - 1])
    monkeypatch.setattr(supervision, "unit_state", unit_state)
    return asks


def test_the_wait_for_a_supervisor_ends_at_the_first_state_past_restarting(monkeypatch):
    asks = _states(monkeypatch, [RESTARTING, RESTARTING, BACK])
    state = supervision._wait_for_supervisor(cluster(OSD1), OSD1, "ceph-osd@1.service", 100,
                                             wait_s=30)
    assert (state.main_pid, len(asks)) == (101, 3)


def test_the_wait_for_a_supervisor_gives_the_state_as_it_stands_once_wait_s_passed(
        monkeypatch):
    asks = _states(monkeypatch, [RESTARTING])
    state = supervision._wait_for_supervisor(cluster(OSD1), OSD1, "ceph-osd@1.service", 100,
                                             wait_s=0)
    assert supervision.restarting(state, killed_pid=100) and len(asks) == 1
