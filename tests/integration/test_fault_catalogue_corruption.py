"""The fault catalogue's silent corruption on both real labs: one replica of a canary really
corrupted on disk, really found (Ceph: a deep scrub; Swift: the object auditor, or the object
server on a GET) and really mended (pg repair; replication), its content checked on the
replica itself where it can be read; no client read corrupt bytes it could not tell; a second
corrupted copy refused; and after a killed run `faultline heal` puts everything back.
(A module of its own beside test_fault_catalogue.py, with the same helpers.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import rados
from catalogue import wait_for
from chaoslib.exceptions import ActivityFailed

from actions import corrupt
from clusters.access.ssh import run_on_node
from clusters.ceph.admin import CephAdmin, is_clean
from clusters.faults import replica_ceph, replica_swift
from clusters.faults.corruption import Corruption, parse_replica_state, swift_replica_state_command
from clusters.paths import default_inventory
from clusters.safety import fault_ledger
from probes import ceph as ceph_probes

pytestmark = pytest.mark.lab


def _config(cluster) -> dict:
    return {"faultline_cluster": cluster.name}


def _outstanding(cluster, ledger=None) -> list[Corruption]:
    return [Corruption.from_arguments(e.record["corruption"])
            for e in (ledger or fault_ledger.backend()).outstanding(cluster.name)]


def _swift_replica(cluster, corruption: Corruption) -> tuple[str | None, bool]:
    """(MD5 of the .data file on the corrupted node, whether a copy is in its quarantine)."""
    return parse_replica_state(run_on_node(cluster.node(corruption.node),
                                           swift_replica_state_command(corruption)).stdout)


def _canary_gone(cluster, corruption: Corruption) -> bool:
    if cluster.kind == "swift":
        status, _, _ = replica_swift.SwiftObjects(cluster).get(corruption.object)
        return status == 404
    with CephAdmin.for_cluster(cluster) as admin:
        ioctx = admin.rados.open_ioctx(corruption.pool)
        try:
            ioctx.stat(corruption.object)
        except rados.ObjectNotFound:
            return True
        finally:
            ioctx.close()
    return False


def _pg_state(cluster, pgid: str) -> str:
    with CephAdmin.for_cluster(cluster) as admin:
        return replica_ceph.pg_stat(admin, pgid)["state"]


@pytest.mark.parametrize("lab", ["ceph", "swift"])
def test_a_corrupted_replica_is_found_and_repaired_and_no_client_reads_it_unseen(
        lab, request, file_ledger):
    cluster = request.getfixturevalue(f"{lab}_cluster")
    config = _config(cluster)
    try:
        # one copy of a fresh canary corrupted on disk, and ledgered before
        result = corrupt.corrupt_replica(configuration=config)
        [corruption] = _outstanding(cluster)
        assert corruption.replica == result["replica"] and result["canary"]
        assert result["md5_corrupted"] != result["md5_good"]
        if lab == "swift":
            assert _swift_replica(cluster, corruption) == (result["md5_corrupted"], False)
        else:
            # a copy that is not the primary, so clients (who read the primary) never see it
            assert result["replica"] in result["holders"][1:]
            assert is_clean(_pg_state(cluster, corruption.pgid))

        # the system finds it and mends it, as the experiment asks (triggered)
        watch = corrupt.detect_and_repair(mode="triggered", timeout_s=150, configuration=config)
        assert watch["detected_after_s"] is not None, watch
        assert watch["repaired_after_s"] is not None, watch
        assert watch["reads"] > 0 and watch["unreadable_reads"] == 0, watch
        if lab == "ceph":
            assert watch["corrupt_reads"] == 0, watch
            assert f"{corruption.replica}: " in watch["detected_by"], watch
            assert watch["confirmed"].startswith("a deep scrub after the repair found"), watch
            assert "inconsistent" not in _pg_state(cluster, corruption.pgid)
        else:
            # a GET that reads the bad copy gets it (then the object server quarantines it):
            # every such read is given away by its ETag, and there is at most one
            assert watch["corrupt_reads"] == watch["corrupt_reads_flagged"] <= 1, watch
            md5, quarantined = _swift_replica(cluster, corruption)
            assert (md5, quarantined) == (result["md5_good"], True)

        # a second corrupted copy of the same object is refused, and nothing is done
        other = next(h for h in corruption.holders if h != corruption.replica)
        with pytest.raises(ActivityFailed) as refused:
            corrupt.corrupt_replica(
                object_name=corruption.object, configuration=config,
                **({"osd_id": int(other.removeprefix("osd."))} if lab == "ceph"
                   else {"node": other}))
        assert (f"refused: corrupt {corruption.object} on {other}"
                f"{'/' if lab == 'swift' else ''}") in str(refused.value)
        assert "2 of 3 copies would be corrupted (1 already) and 1 good left" \
            in str(refused.value)
        assert len(_outstanding(cluster)) == 1

        restored = corrupt.restore_corruption(configuration=config)
        assert [r["object"] for r in restored["restored"]] == [corruption.object]
        assert fault_ledger.outstanding(cluster.name) == []
        assert _canary_gone(cluster, corruption)
        if lab == "swift":  # its quarantined copy is gone too
            assert _swift_replica(cluster, corruption)[1] is False
    finally:
        corrupt.restore_corruption(configuration=config)  # idempotent
    if lab == "ceph":
        ceph_probes.wait_for_health_ok(timeout_s=300, require_all_up=True, configuration=config)


@pytest.mark.parametrize("lab", [
    pytest.param("swift", id="swift"),
    # the OSD is stopped and started for the flip: about 40 s more
    pytest.param("ceph", id="ceph", marks=[pytest.mark.full]),
])
def test_faultline_heal_repairs_and_removes_a_corruption_left_by_a_killed_run(
        lab, request, tmp_path, invoke):
    cluster = request.getfixturevalue(f"{lab}_cluster")
    config = _config(cluster)
    env = {**os.environ, "FAULTLINE_HOME": str(tmp_path),
           "FAULTLINE_INVENTORY": str(default_inventory())}
    run = subprocess.Popen(
        [sys.executable, "-c", "import json, time; from actions import corrupt; "
         f"out = corrupt.corrupt_replica(configuration={config!r}); "
         "print(json.dumps(out), flush=True); time.sleep(300)"],
        env=env, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    # the killed run's ledger file, which `faultline heal` reads (FAULTLINE_HOME)
    ledger = fault_ledger.FileLedger(tmp_path / "faults.json")
    try:
        try:
            injected = run.stdout.readline()
        finally:
            os.kill(run.pid, signal.SIGKILL)  # the run dies with its replica corrupted
            run.wait()
        assert injected, "the corruption was not injected"
        [corruption] = _outstanding(cluster, ledger)
        if lab == "swift":
            assert _swift_replica(cluster, corruption)[0] == corruption.bad_md5

        healed = invoke("heal", "--cluster", cluster.name, "--inventory",
                        str(default_inventory()))

        assert healed.exit_code == 0, healed.output
        assert "restored: 16 bytes flipped" in healed.output, healed.output
        assert ledger.outstanding(cluster.name) == []
        assert _canary_gone(cluster, corruption)
        if lab == "swift":
            # the good bytes went back first, and nothing is left in quarantine
            assert _swift_replica(cluster, corruption) == (None, False)
        else:
            wait_for("the PG active+clean, not inconsistent",
                     lambda: is_clean(_pg_state(cluster, corruption.pgid)), 120)
    finally:
        fault_ledger.set_backend(ledger)
        corrupt.restore_corruption(configuration=config)  # whatever heal left
        fault_ledger.set_backend(None)
