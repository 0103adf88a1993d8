"""Change how a cluster shares its time between clients and recovery for the length of a
run, and put it back, as Chaos Toolkit actions: the knob of the recovery-settings study
(experiments/ceph-recovery-*.json, experiments/swift-recovery-*.json).

`set_ceph_recovery(settings={"osd_mclock_profile": "high_recovery_ops"})` sets the named
settings for every OSD in the monitors' config database, once the running release has said
they exist, change at runtime and take these values (clusters/ceph/config_changes.py), and
waits until every up OSD runs with them: a change that did not take fails the run rather
than be timed as if it had. What the database held before is written into the fault
ledger first, so `restore_ceph_recovery` (a rollback, or `faultline heal` after a killed
run) puts back exactly that and nothing the experiment names.

`set_swift_replication(settings={"concurrency": 1, "handoffs_first": true})` does the same
for Swift's object replicators: the `[object-replicator]` lines of the file each runs with,
then a restart of each (clusters/swift/replicator_changes.py); what each file held goes into
the ledger first, and `restore_swift_replication` writes it back.

Not a fault: nothing is taken down, and an experiment names its real fault in the
control's `fault` and the setting in `baseline_after`, so the baseline runs under it.
"""

from __future__ import annotations

from chaoslib.exceptions import ActivityFailed

from clusters.access.inventory import Cluster
from clusters.ceph import config_changes
from clusters.ceph.admin import CephAdmin
from clusters.exceptions import ClusterError
from clusters.swift import replicator_changes

from .fault_spec import Fault, Scope
from .safety import (
    cluster_of,
    fail,
    fault_action,
    ledger_before,
    ledger_restored,
    recorded,
    refused_record,
)

__all__ = ["set_ceph_recovery", "restore_ceph_recovery", "set_swift_replication",
           "restore_swift_replication"]

KEY = "settings:osd"
SWIFT_KEY = "settings:object-replicator"


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run, from the document alone: a cluster of the right kind and settings of
    the list."""
    if func == "set_ceph_recovery":
        kind, what, problems = "ceph", "a Ceph cluster's OSDs", config_changes.static_problems
    elif func == "set_swift_replication":
        kind, what, problems = ("swift", "a Swift cluster's object replicators",
                                replicator_changes.static_problems)
    else:
        return
    if cluster.kind != kind:
        raise ActivityFailed(f"{func} changes {what}; {cluster.name} is a {cluster.kind} "
                             "cluster")
    found = problems(arguments.get("settings"))
    if found:
        raise ActivityFailed("; ".join(found))


def check_live(func: str, arguments: dict, cluster: Cluster) -> None:
    """As a run starts (read-only): the release has each setting, changes it at runtime and
    takes its value, and no OSD overrides it."""
    if func != "set_ceph_recovery":
        return
    try:
        with CephAdmin.for_cluster(cluster) as admin:
            config_changes.check(admin, arguments["settings"])
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


@fault_action
def set_ceph_recovery(settings: dict = None, configuration: dict = None) -> dict:
    """Set the OSD settings, and wait until every up OSD runs with them. Returns what was
    set, what the database held before, and what each OSD runs."""
    cluster = cluster_of(configuration)
    check_arguments("set_ceph_recovery", {"settings": settings}, cluster)
    if recorded(cluster, KEY) is not None:
        raise ActivityFailed("set_ceph_recovery: an earlier change of the OSD settings is "
                             "still outstanding in the fault ledger: run `faultline heal` "
                             "first, or its original values would be lost")
    try:
        with CephAdmin.for_cluster(cluster) as admin:
            wanted = config_changes.check(admin, settings)
            before = config_changes.previous(admin, list(wanted))
            ledger_before(cluster, KEY, "OSD settings " + ", ".join(
                f"{name}={value}" for name, value in wanted.items()),
                "actions.recovery_tuning.restore_ceph_recovery", {},
                {"previous": before, "set": wanted})
            config_changes.apply(admin, wanted)
            running = config_changes.wait_taken(admin, wanted)
    except ClusterError as exc:
        raise fail("set_ceph_recovery", exc) from None
    return {"set": wanted, "previous": before, "osds": running}


def restore_ceph_recovery(configuration: dict = None) -> dict:
    """Put back what the database held before set_ceph_recovery, as the ledger recorded it,
    and wait until every up OSD runs it again (idempotent: with nothing outstanding, nothing
    is changed)."""
    cluster = cluster_of(configuration)
    record = recorded(cluster, KEY)
    if record is None:
        return {"restored": {}}
    before = record.get("previous")
    if not isinstance(before, dict) or not all(
            name in config_changes.SETTABLE and (value is None or isinstance(value, str))
            for name, value in before.items()):
        raise refused_record("restore_ceph_recovery", KEY,
                             f"names other settings than {', '.join(config_changes.SETTABLE)}")
    try:
        with CephAdmin.for_cluster(cluster) as admin:
            config_changes.put_back(admin, before)
            config_changes.wait_put_back(admin, before)
    except ClusterError as exc:
        raise fail("restore_ceph_recovery", exc) from None
    ledger_restored(cluster, KEY)
    return {"restored": before}


@fault_action
def set_swift_replication(settings: dict = None, configuration: dict = None) -> dict:
    """Set the object replicators' settings in the file each runs with, restart each, and
    check that each runs with them. Returns what was set, what each file held before, and
    what each replicator runs with."""
    cluster = cluster_of(configuration)
    check_arguments("set_swift_replication", {"settings": settings}, cluster)
    if recorded(cluster, SWIFT_KEY) is not None:
        raise ActivityFailed("set_swift_replication: an earlier change of the replicators' "
                             "settings is still outstanding in the fault ledger: run "
                             "`faultline heal` first, or its original values would be lost")
    wanted = {name: replicator_changes.normalised(name, value)
              for name, value in settings.items()}
    try:
        before = replicator_changes.previous(cluster, list(wanted))
        ledger_before(cluster, SWIFT_KEY, "object replicator settings " + ", ".join(
            f"{name}={value}" for name, value in wanted.items()),
            "actions.recovery_tuning.restore_swift_replication", {},
            {"previous": before, "set": wanted})
        replicator_changes.apply(cluster, wanted)
        running = replicator_changes.check_taken(cluster, wanted)
    except ClusterError as exc:
        raise fail("set_swift_replication", exc) from None
    return {"set": wanted, "previous": before, "replicators": running}


def restore_swift_replication(configuration: dict = None) -> dict:
    """Write back what each replicator's file held before set_swift_replication, as the
    ledger recorded it, and restart each (idempotent: with nothing outstanding, nothing is
    changed). The record names only replicators and settings of the list, or it is refused."""
    cluster = cluster_of(configuration)
    record = recorded(cluster, SWIFT_KEY)
    if record is None:
        return {"restored": {}}
    before = record.get("previous")
    if not isinstance(before, dict) or not all(
            isinstance(values, dict) and all(
                name in replicator_changes.SETTABLE
                and (value is None or isinstance(value, str) and value.isprintable()
                     and len(value) <= 100)
                for name, value in values.items())
            for values in before.values()):
        raise refused_record("restore_swift_replication", SWIFT_KEY, "names other settings "
                             f"than {', '.join(replicator_changes.SETTABLE)}")
    try:
        replicator_changes.put_back(cluster, before)
    except ClusterError as exc:
        raise fail("restore_swift_replication", exc) from None
    ledger_restored(cluster, SWIFT_KEY)
    return {"restored": before}


def _scope(cluster: Cluster, a: dict) -> Scope:
    check_arguments("set_ceph_recovery", a, cluster)
    return Scope("sets " + ", ".join(f"{name}={value}" for name, value in
                                     a["settings"].items()) + " for every OSD")


def _swift_scope(cluster: Cluster, a: dict) -> Scope:
    check_arguments("set_swift_replication", a, cluster)
    return Scope("sets " + ", ".join(f"{name}={value}" for name, value in
                                     a["settings"].items()) + " for every object replicator")


FAULTS = {
    "set_ceph_recovery": Fault(
        "restore_ceph_recovery", _scope, takes_down=False, notes={"ceph": (
            "The OSDs ran with changed recovery settings (set_ceph_recovery): the run's "
            "recovery and client figures are for those settings, not the cluster's own.")}),
    "set_swift_replication": Fault(
        "restore_swift_replication", _swift_scope, takes_down=False, notes={"swift": (
            "The object replicators ran with changed settings (set_swift_replication): the "
            "run's recovery and client figures are for those settings, not the cluster's "
            "own.")}),
}
