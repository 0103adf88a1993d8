"""Which outstanding faults a worker's auto-heal may restore unasked: only those nothing alive
can still hold (service.runs.orphans)."""

from __future__ import annotations

import pytest

from clusters.safety.fault_ledger import FaultEntry
from service.runs.orphans import is_orphan, orphans

DEAD, ALIVE, ELSEWHERE = False, True, None


def entry(id: str, key: str = "daemon:osd.1", run_id: int | None = 7,
          cluster: str = "lab-ceph") -> FaultEntry:
    return FaultEntry(id=id, cluster=cluster, key=key, description=f"{key} broken",
                      restore="actions.ceph.start_osd", arguments={"osd_id": 1},
                      injected_at=1000.0, owner_pid=4242, owner_host="node7", run_id=run_id)


@pytest.mark.parametrize(("owner", "status", "orphan"), [
    (DEAD, "interrupted", True),  # the runner was SIGKILLed: its run closed, its fault left
    (DEAD, None, True),  # dead on this host, no run (`chaos run`) or the run was deleted
    (DEAD, "completed", True),  # its restore failed at the end of the run
    (DEAD, "running", False),  # never a live run's fault, even if the reaper has not seen it
    (DEAD, "queued", False),
    (ALIVE, "interrupted", False),  # the injecting process still runs here
    (ALIVE, None, False),
    (ELSEWHERE, "interrupted", True),  # another host: dead once its run is closed
    (ELSEWHERE, "failed", True),
    (ELSEWHERE, "running", False),  # another host whose heartbeat is fresh
    (ELSEWHERE, None, False),  # another host, no run to judge it by
], ids=["dead-interrupted", "dead-no-run", "dead-completed", "dead-running", "dead-queued",
        "alive-closed", "alive-no-run", "elsewhere-interrupted", "elsewhere-failed",
        "elsewhere-running", "elsewhere-no-run"])
def test_a_fault_is_an_orphan_only_when_nothing_alive_can_hold_it(owner, status, orphan):
    assert is_orphan(entry("a"), owner, status) is orphan


def test_the_faults_of_a_dead_run_are_chosen_in_the_order_given():
    first, second = entry("a", "daemon:osd.1"), entry("b", "disk:node2")

    assert orphans([first, second], {"a": DEAD, "b": DEAD}, {7: "interrupted"}) == [
        first, second]


def test_a_fault_on_a_thing_a_live_run_broke_again_is_left_alone():
    # run 7 died with osd.1 down; run 8, alive, killed osd.1 again: one restore would undo both
    dead = entry("a", run_id=7)
    live = entry("b", run_id=8)

    assert orphans([dead, live], {"a": DEAD, "b": ALIVE}, {7: "interrupted", 8: "running"}) == []


def test_a_fault_on_another_thing_of_the_same_cluster_is_still_healed():
    dead = entry("a", "daemon:osd.1", run_id=7)
    live = entry("b", "daemon:osd.2", run_id=8)

    assert orphans([dead, live], {"a": DEAD, "b": ALIVE},
                   {7: "interrupted", 8: "running"}) == [dead]


def test_the_same_key_on_another_cluster_does_not_hold_it():
    dead = entry("a", run_id=7, cluster="lab-ceph")
    live = entry("b", run_id=8, cluster="prod-ceph")

    assert orphans([dead, live], {"a": DEAD, "b": ALIVE},
                   {7: "interrupted", 8: "running"}) == [dead]


def test_a_fault_whose_owner_is_unknown_and_whose_run_is_gone_is_left_alone():
    # no liveness given counts as another host; a run missing from the statuses, as deleted
    assert orphans([entry("a", run_id=99)], {}, {}) == []


def test_a_fault_on_another_host_whose_run_is_still_running_holds_its_key():
    elsewhere = entry("a", run_id=8)
    dead = entry("b", run_id=7)

    assert orphans([dead, elsewhere], {"a": ELSEWHERE, "b": DEAD},
                   {7: "interrupted", 8: "running"}) == []
