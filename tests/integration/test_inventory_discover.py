"""`faultline inventory discover` against the real labs: what it finds is what the labs'
own inventory says (hosts, zones, OSD ids and devices, addresses, ports, daemons), the
file loads with the inventory loader, bad input writes nothing, and with the reach details
taken from the lab's inventory a discovered Swift inventory runs a kill experiment."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
import rados
from short_runs import shortened
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from clusters.access.inventory import Cluster, Service, load_cluster
from service.store.models import Run

REPO = Path(__file__).resolve().parents[2]
SWIFT_KILL = REPO / "experiments" / "swift-kill-object-server.json"
SWIFT_SERVERS = ("object-server", "container-server", "account-server")
# the lab starts each daemon in its node's memory cgroup (lab/memcg.py), a lab detail no
# ring holds: the start command an operator gives discovery is the command itself
IN_NODE_MEMCG = re.compile(r"^echo \$\$ > \S+/cgroup\.procs && ")


def own_start(command: str) -> str:
    return IN_NODE_MEMCG.sub("", command)

pytestmark = pytest.mark.lab


def discover(invoke, *args: str, attempts: int = 3):
    """The command through click's runner; a read the other engineer's injected loss broke
    is asked again (an error that is not about reaching the cluster is returned at once)."""
    for attempt in range(attempts):
        result = invoke("inventory", "discover", *args)
        if result.exit_code == 0 or "cannot reach" not in result.output or (
                attempt == attempts - 1):
            return result
        time.sleep(2)
    return result


def mon_host(cluster: Cluster) -> str:
    """The lab monitors' address, as its ceph.conf gives it to librados."""
    handle = rados.Rados(conffile=cluster.client["conf"])
    return handle.conf_get("mon_host")


def templated(value: str, replacements: dict[str, str]) -> str:
    """A lab value turned into a discovery template, replacing in order (lab text ->
    template text)."""
    for text, template in replacements.items():
        value = value.replace(text, template)
    return value


def nodes_of(cluster: Cluster) -> dict[str, tuple[str, str | None]]:
    return {n.name: (n.address, n.zone) for n in cluster.nodes}


def loop_backing_file(device: str) -> str:
    return Path(f"/sys/block/{Path(device).name}/loop/backing_file").read_text().strip()


# --- Ceph ---

def test_ceph_discovery_from_the_lab_monitor_matches_the_lab_inventory(ceph_cluster, invoke,
                                                                      tmp_path):
    lab = ceph_cluster
    rgw = lab.service("rgw.lab")
    output = tmp_path / "ceph.yaml"
    # reach details from the lab's inventory, as an operator who knows them would give them
    result = discover(invoke, "ceph", "--mon", mon_host(lab), "--cluster", "found", "-o",
                      str(output), "--pid-file",
                      templated(rgw.pid_file, {"client.rgw.lab": "{entity}"}), "--start",
                      templated(rgw.start, {"client.rgw.lab": "{entity}", "rgw.lab": "{name}",
                                            "radosgw": "{program}"}))
    assert result.exit_code == 0, result.output
    found = load_cluster(output, "found")

    assert nodes_of(found) == nodes_of(lab)
    assert {d.osd: (d.node, d.mount) for d in found.disks} == {
        d.osd: (d.node, d.mount) for d in lab.disks}
    # the lab's OSD disks are loop-mounted image files: the device found is their loop device
    assert {d.osd: loop_backing_file(d.device) for d in found.disks} == {
        d.osd: d.device for d in lab.disks}
    assert {s.name: (s.kind, s.node, s.pid_file) for s in found.services} == {
        s.name: (s.kind, s.node, s.pid_file) for s in lab.services}
    assert found.service("rgw.lab").start == rgw.start
    assert found.client["prometheus"] == lab.client["prometheus"]
    assert found.client["conf"] == "/etc/ceph/ceph.conf"  # none given: a TODO says so
    text = output.read_text()
    assert "# TODO: how to reach the nodes over SSH" in text
    assert "# TODO: no ceph.conf was given" in text
    assert "no orchestrator (ceph orch ps (mgr) failed (-2): No orchestrator configured" in (
        " ".join(line.lstrip("# ") for line in text.splitlines()))


def test_ceph_discovery_from_a_conf_writes_its_path_and_guesses_units(ceph_cluster, invoke):
    result = discover(invoke, "ceph", "--conf", ceph_cluster.client["conf"])
    assert result.exit_code == 0, result.output
    assert f"conf: {ceph_cluster.client['conf']}\n" in result.stdout
    assert "unit: ceph-osd@0}" in result.stdout
    assert "# TODO: unit guessed from Debian's ceph packages: check" in result.stdout


def test_an_existing_output_is_kept_without_force(ceph_cluster, invoke, tmp_path):
    output = tmp_path / "inventory.yaml"
    output.write_text("mine\n")
    refused = invoke("inventory", "discover", "ceph", "--conf", ceph_cluster.client["conf"],
                     "-o", str(output))
    assert refused.exit_code == 2
    assert f"error: {output} exists; give --force to overwrite it" in refused.output
    assert output.read_text() == "mine\n"
    forced = discover(invoke, "ceph", "--conf", ceph_cluster.client["conf"], "-o",
                      str(output), "--force")
    assert forced.exit_code == 0, forced.output
    assert load_cluster(output, "discovered-ceph").kind == "ceph"


# --- Swift ---

def swift_reach_options(lab: Cluster) -> list[str]:
    """Every reach detail of the lab's inventory as discovery options."""
    server: Service = lab.service("object-server.node1")
    disk = lab.disks_on("node1")[0]
    node = lab.node("node1")
    return [
        "--ssh-user", node.ssh.user, "--ssh-port", str(node.ssh.port),
        "--ssh-key", node.ssh.key_file, "--known-hosts", node.ssh.known_hosts,
        "--pid-file", templated(server.pid_file, {server.name: "{name}"}),
        "--start", templated(own_start(server.start), {server.name: "{name}",
                                            "object-server/node1": "{kind}/{node}",
                                            "swift-object-server": "{program}"}),
        "--mount", templated(disk.mount, {"node1/d1": "{node}/{device}"}),
        "--block-device", templated(disk.device, {"d1": "{device}"}),
        "--auth-url", lab.client["auth_url"], "--user", lab.client["user"],
        "--key-file", lab.client["key_file"]]


def test_swift_discovery_from_the_lab_rings_matches_the_lab_inventory(swift_cluster, invoke,
                                                                      tmp_path):
    lab = swift_cluster
    output = tmp_path / "swift.yaml"
    result = discover(invoke, "swift", lab.client["swift_dir"], "-o", str(output),
                      *swift_reach_options(lab))
    assert result.exit_code == 0, result.output
    found = load_cluster(output, "discovered-swift")

    assert nodes_of(found) == nodes_of(lab)
    assert {(d.node, d.swift_device): (d.device, d.mount) for d in found.disks} == {
        (d.node, d.swift_device): (d.device, d.mount) for d in lab.disks}
    servers = {s.name: s for s in lab.services if s.kind in SWIFT_SERVERS}
    assert {s.name: (s.kind, s.node, s.pid_file, s.start, s.program)
            for s in found.services} == {
        s.name: (s.kind, s.node, s.pid_file, own_start(s.start), s.program)
        for s in servers.values()}
    for key in ("auth_url", "user", "key_file", "swift_dir", "swift_conf", "ports"):
        assert found.client[key] == lab.client[key], key
    assert {n.ssh for n in found.nodes} == {n.ssh for n in lab.nodes}
    # everything the options could give was given: only what no option covers is TODO
    todos = [line for line in output.read_text().splitlines() if "# TODO:" in line]
    assert len(todos) == 3, todos  # the proxy, the background daemons, the BMCs


def test_swift_discovery_without_reach_details_marks_them_todo(swift_cluster, invoke):
    result = discover(invoke, "swift", swift_cluster.client["swift_dir"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "# TODO: how to reach the nodes over SSH is not in the rings" in text
    assert text.count("device: TODO, mount: /srv/node/") == len(swift_cluster.disks)
    assert "key_file" not in text.split("client:")[1]


@pytest.mark.parametrize("args, message", [
    (["ceph", "--mon", "10.77.0.250", "--timeout", "2"],
     "error: cannot reach the Ceph monitors of 10.77.0.250: [errno 110] RADOS timed out "
     "(error connecting to the cluster)"),
    (["ceph", "--mon", "10.77.0.1", "--keyring", "/nonexistent/ceph.keyring"],
     "error: the keyring /nonexistent/ceph.keyring does not exist"),
    (["ceph"], "error: give the monitors' address (--mon) or a ceph.conf (--conf)"),
    (["swift", "/nonexistent/rings"], "error: /nonexistent/rings does not exist"),
    (["swift", str(REPO)], f"error: no Swift ring file (object.ring.gz, ...) in {REPO}"),
    (["swift", str(REPO / "README.md")], f"error: {REPO / 'README.md'} is not a ring file "
     "(expected object.ring.gz, container.ring.gz, account.ring.gz or object-N.ring.gz)"),
])
def test_bad_input_is_one_error_and_no_file(args, message, invoke, tmp_path):
    output = tmp_path / "out.yaml"
    result = invoke("inventory", "discover", *args, "-o", str(output))
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == message
    assert not output.exists()


# --- end to end ---

@pytest.mark.full  # a fault, its restore and Swift's replication: over a minute
def test_a_discovered_swift_inventory_runs_the_kill_experiment_like_the_lab_one(
        swift_cluster, invoke, env, database_url, tmp_path):
    inventory = tmp_path / "inventory.yaml"
    result = discover(invoke, "swift", swift_cluster.client["swift_dir"], "-o",
                      str(inventory), *swift_reach_options(swift_cluster))
    assert result.exit_code == 0, result.output
    # discovery writes the cluster protected; the operator allows faults as its comment says
    assert inventory.read_text().count("    chaos: protected\n") == 1
    inventory.write_text(inventory.read_text().replace("    chaos: protected\n",
                                                       "    chaos: allowed\n"))
    # the catalogue's experiment with make test's short phases, as the lab's own test runs it
    experiment = shortened(SWIFT_KILL, tmp_path, fault_hold_s=15)
    done = subprocess.run(["faultline", "run", str(experiment), "--cluster", "discovered-swift",
                           "--inventory", str(inventory)],
                          env={**env, "FAULTLINE_CLUSTER": "discovered-swift",
                               "FAULTLINE_INVENTORY": str(inventory)},
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with Session(create_engine(database_url)) as session:
        run = session.execute(select(Run).order_by(Run.id.desc()).limit(1)).scalar_one()
    f = run.figures
    print(json.dumps({k: f.get(k) for k in (
        "baseline_ops", "errors", "throughput_drop", "worst_second_drop", "time_to_detect_s",
        "time_to_client_recovery_s", "time_to_full_redundancy_s",
        "time_to_full_redundancy_after_restore_s", "data_at_risk_s", "lost_objects",
        "verified_objects")}))
    # what tests/integration/test_swift_kill_object_server.py asks of the lab inventory's run
    assert run.status == "completed", (run.status, run.error)
    assert run.cluster == "discovered-swift"
    assert f["baseline_ops"] > 0
    assert f["time_to_detect_s"] is not None and f["time_to_detect_s"] < 10, f["reasons"]
    assert f["time_to_full_redundancy_s"] is None
    assert f["time_to_full_redundancy_after_restore_s"] is not None, f["reasons"]
    assert f["lost_objects"] == 0 and f["corrupt_objects"] == 0
    assert f["verified_objects"] > 0
