"""A run's load from two driver hosts: two `faultline worker --queue load` in two client
network namespaces on the Ceph lab's bridge (reaching PostgreSQL through socat on the
bridge address, as a remote host reaches the service's database), a run whose workload
names `drivers: 2`, and the same run with one driver: the figures agree."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from catalogue import wait_for
from short_runs import pause, short_experiment
from sqlalchemy import func, select

from clusters.paths import default_inventory
from lab import netns
from lab.netns import CEPH_NETWORK, LabNetwork, LabNode
from service.store import pgserver
from service.store.models import LedgerEntry, LoadSample, Run, RunDriver

REPO = Path(__file__).resolve().parents[2]
CLIENTS = LabNetwork(bridge=CEPH_NETWORK.bridge, subnet=CEPH_NETWORK.subnet,
                     netns_prefix="flclient")
RATE = 100

pytestmark = pytest.mark.lab


@pytest.fixture
def client_hosts(ceph_cluster):
    """Two client machines: namespaces on the Ceph lab's bridge (10.77.0.101 and .102)."""
    nodes = [LabNode(91, CLIENTS), LabNode(92, CLIENTS)]
    try:
        for node in nodes:
            netns.create_node(node)
        yield nodes
    finally:
        for node in nodes:
            netns.delete_node(node)
    assert not any(netns.netns_exists(node.netns) for node in nodes)


@pytest.fixture
def bridged_database(database_url, client_hosts):
    """The test database as the client hosts reach it: socat on the bridge address, to the
    server on loopback."""
    bridge, port = CEPH_NETWORK.bridge_address, pgserver.port()
    socat = subprocess.Popen(["socat", f"TCP-LISTEN:{port},bind={bridge},reuseaddr,fork",
                              f"TCP:127.0.0.1:{port}"], start_new_session=True)
    try:
        wait_for("socat to listen", lambda: _connectable(bridge, port), 10, every_s=0.1)
        yield database_url.replace("127.0.0.1", bridge)
    finally:
        os.killpg(socat.pid, signal.SIGTERM)  # socat and the children it forked
        socat.wait(timeout=10)


def _connectable(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture
def load_workers(env, client_hosts, bridged_database):
    """`faultline worker --queue load` in each client namespace."""
    workers = [subprocess.Popen(
        [*netns.nsenter_argv(node.netns), sys.executable, "-m", "service", "worker",
         "--queue", "load", "--name", f"driver-{node.netns}"],
        env={**env, "DATABASE_URL": bridged_database}, cwd=REPO,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for node in client_hosts]
    yield dict(zip((n.netns for n in client_hosts), workers, strict=True))
    for worker in workers:
        worker.send_signal(signal.SIGINT)
    for worker in workers:
        try:
            worker.wait(timeout=60)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait()


def _run(env, sessions, tmp_path: Path, drivers: int) -> int:
    experiment = short_experiment(f"{drivers} load drivers", [pause(12)], rate=RATE,
                                  baseline_s=10, fault="hold", tail_s=2)
    experiment["controls"][0]["provider"]["arguments"]["workload"].update(
        drivers=drivers, objects_per_container=40)
    path = tmp_path / f"drivers-{drivers}.json"
    path.write_text(json.dumps(experiment))
    with sessions() as session:
        before = session.execute(select(func.coalesce(func.max(Run.id), 0))).scalar()
    done = subprocess.run(["faultline", "run", str(path), "--cluster", "lab-ceph",
                           "--inventory", str(default_inventory())], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with sessions() as session:
        return session.execute(select(Run.id).where(Run.id > before)).scalar_one()


# make test-full only (74-89 s): the merge of several drivers' figures is checked by the unit
# tests and bench/p4, the SSH path by test_fault_safety's power-off over SSH
@pytest.mark.full
def test_two_driver_hosts_carry_one_load_and_give_the_figures_of_one(
        env, sessions, tmp_path, load_workers, client_hosts):
    two = _run(env, sessions, tmp_path, drivers=2)
    with sessions() as session:
        drivers = session.execute(select(RunDriver).where(RunDriver.run_id == two)
                                  .order_by(RunDriver.index)).scalars().all()
        # each driver ran in its own client namespace: its PID lives there
        in_ns = {node.netns: set(netns.pids_in(node.netns)) for node in client_hosts}
        assert [d.state for d in drivers] == ["verified", "verified"], [d.error for d in drivers]
        assert all(d.verify_at is not None and d.verify["consistency"] for d in drivers)
        assert {next(ns for ns, pids in in_ns.items() if d.pid in pids) for d in drivers} \
            == set(in_ns)
        assert all(d.ops > RATE / 2 * 20 for d in drivers)  # each carried half of ~25 s
        # every second of the load is there once the drivers' samples are merged
        seconds = session.execute(select(LoadSample.ts).where(LoadSample.run_id == two)
                                  .group_by(LoadSample.ts).order_by(LoadSample.ts)
                                  ).scalars().all()
        assert seconds == [seconds[0] + i for i in range(len(seconds))]
        assert len(seconds) >= 20
        names = session.execute(select(LedgerEntry.name).where(LedgerEntry.run_id == two)
                                ).scalars().all()
        assert {"-d0-" in n for n in names} == {True, False}  # both drivers' objects
        run_two = session.get(Run, two)
        figures_two, verify_two = run_two.figures, run_two.verify

    one = _run(env, sessions, tmp_path, drivers=1)
    with sessions() as session:
        assert session.execute(select(func.count()).select_from(RunDriver)
                               .where(RunDriver.run_id == one)).scalar() == 0
        run_one = session.get(Run, one)
        figures_one = run_one.figures

    assert verify_two["checked"] == len(names) and verify_two["lost_objects"] == 0
    # each driver checked its own objects' history; the run adds them up
    consistency = verify_two["consistency"]
    assert consistency["drivers"] == 2 and consistency["operations"] > len(names)
    assert figures_two["stale_reads"] == 0 and figures_two["resurrected_objects"] == 0
    assert figures_two["listing_gaps"] == 0  # each driver listed its containers once
    for figures in (figures_one, figures_two):
        assert figures["errors"] == 0
        assert figures["baseline_ops"] == pytest.approx(RATE, rel=0.05)
    assert figures_two["baseline_ops"] == pytest.approx(figures_one["baseline_ops"], rel=0.05)
    # latency: the same cluster, the same rate; within noise of a shared 2-core machine
    assert figures_two["baseline_p50_ms"] < 3 * figures_one["baseline_p50_ms"] + 5
    assert figures_one["baseline_p50_ms"] < 3 * figures_two["baseline_p50_ms"] + 5
    (REPO / "tests" / "artifacts").mkdir(exist_ok=True)
    (REPO / "tests" / "artifacts" / "load-drivers.json").write_text(json.dumps({
        "two_drivers": {k: figures_two.get(k) for k in ("baseline_ops", "baseline_p50_ms",
                                                        "baseline_p99_ms", "errors")},
        "one_driver": {k: figures_one.get(k) for k in ("baseline_ops", "baseline_p50_ms",
                                                       "baseline_p99_ms", "errors")},
        "driver_ops": [d.ops for d in drivers]}, indent=2))
