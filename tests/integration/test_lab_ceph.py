"""The real Ceph lab (up once per session, see conftest.py), then cheap checks against it:
the cluster, its inventory, and RGW serving the Swift API and S3 with the inventory's keys."""

from __future__ import annotations

import http.client
import json
import subprocess
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from clusters.access import services
from clusters.access.credentials import swift_credentials
from clusters.access.inventory import Cluster
from clusters.ceph.admin import CephAdmin
from clusters.paths import default_inventory
from lab import ceph as ceph_lab
from lab import ceph_rgw, disks
from lab.ceph_layout import RGW_POOLS, lab_at

pytestmark = pytest.mark.lab


@pytest.fixture
def lab_cluster(ceph_cluster: Cluster) -> Cluster:
    return ceph_cluster


def test_up_reaches_health_ok_with_all_osds(lab_cluster: Cluster) -> None:
    with CephAdmin(lab_cluster.client["conf"]) as admin:
        state = admin.state()
    assert state.health == "HEALTH_OK"
    assert state.num_osds == state.num_up_osds == state.num_in_osds == 4
    assert state.pgs_by_state == {"active+clean": state.num_pgs}


def test_the_balancer_moves_no_pg_behind_a_run(lab_cluster: Cluster) -> None:
    """Its upmaps re-peered PGs in the middle of later baselines (lab/ceph_setup.py)."""
    done = subprocess.run(["ceph", "-c", lab_cluster.client["conf"], "balancer", "status",
                           "--format", "json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["active"] is False


def test_each_osd_is_alone_on_its_crush_host(lab_cluster: Cluster) -> None:
    with CephAdmin(lab_cluster.client["conf"]) as admin:
        tree = admin.osd_tree()
    by_id = {n["id"]: n for n in tree["nodes"]}
    hosts = {n["name"]: [by_id[c]["name"] for c in n.get("children", [])]
             for n in tree["nodes"] if n["type"] == "host"}
    assert hosts == {f"node{i + 1}": [f"osd.{i}"] for i in range(4)}
    assert all(n["status"] == "up" for n in tree["nodes"] if n["type"] == "osd")
    # hosts in three CRUSH zones (lab/zones.py), and the pool keeps one copy per zone
    zones = {n["name"]: sorted(by_id[c]["name"] for c in n.get("children", []))
             for n in tree["nodes"] if n["type"] == "zone"}
    assert zones == {"zone1": ["node1", "node2"], "zone2": ["node3"], "zone3": ["node4"]}


def test_inventory_describes_the_lab(lab_cluster: Cluster) -> None:
    assert lab_cluster.kind == "ceph" and lab_cluster.lab
    assert [(n.name, n.address, n.zone, n.netns) for n in lab_cluster.nodes] == [
        ("node1", "10.77.0.11", "zone1", "flceph1"), ("node2", "10.77.0.12", "zone1", "flceph2"),
        ("node3", "10.77.0.13", "zone2", "flceph3"), ("node4", "10.77.0.14", "zone3", "flceph4")]
    assert sorted(s.name for s in lab_cluster.services) == [
        "mgr.x", "mon.a", "osd.0", "osd.1", "osd.2", "osd.3", "rgw.lab"]
    assert lab_cluster.service("mon.a").node is None
    assert Path(lab_cluster.client["conf"]).is_file()
    assert lab_cluster.client["pool"] == "faultline"


def test_inventory_names_rgw_and_its_key_files_never_the_keys(lab_cluster: Cluster) -> None:
    rgw = lab_cluster.service("rgw.lab")
    assert (rgw.kind, rgw.node) == ("rgw", None)
    assert services.pid_of(lab_cluster, rgw) is not None
    swift_api, s3 = lab_cluster.client["swift_api"], lab_cluster.client["s3"]
    assert swift_api["auth_url"] == "http://127.0.0.1:7480/auth/1.0"
    assert swift_api["user"] == "faultline:swift"
    assert s3["endpoint"] == "http://127.0.0.1:7480"
    inventory_text = default_inventory().read_text()
    for path in (swift_api["key_file"], s3["access_key_file"], s3["secret_key_file"]):
        assert Path(path).stat().st_mode & 0o777 == 0o600, path
        secret = Path(path).read_text().strip()
        assert len(secret) >= 20 and secret not in inventory_text, path


def test_each_osd_data_dir_is_a_loop_mount_of_its_image(lab_cluster: Cluster) -> None:
    devices = {mount_point: device for device, mount_point, _ in disks.mounts()}
    for disk in lab_cluster.disks:
        device = devices.get(disk.mount)
        assert device is not None and device.startswith("/dev/loop"), disk
        assert device in disks.loop_devices(Path(disk.device)), disk


def test_ssh_to_a_node_lands_in_its_namespace(lab_cluster: Cluster) -> None:
    node = lab_cluster.node("node1")
    done = subprocess.run(
        ["ssh", "-i", node.ssh.key_file, "-o", f"UserKnownHostsFile={node.ssh.known_hosts}",
         "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
         f"{node.ssh.user}@{node.address}", "ip -4 -o addr show dev eth0"],
        capture_output=True, text=True, timeout=30, check=True)
    assert f" {node.address}/24 " in done.stdout


# -- RGW -----------------------------------------------------------------------------


def _secret(path: str) -> str:
    return Path(path).read_text().strip()


def _http(method: str, url: str, headers: dict[str, str], body: bytes | None = None
          ) -> tuple[int, dict[str, str], bytes]:
    """One plain HTTP request: status, headers (lower-case names), body."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request(method, parts.path, body=body, headers=headers)
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        conn.close()


def _swift_auth(auth_url: str, user: str, key: str) -> tuple[int, str | None, str | None]:
    status, headers, _ = _http("GET", auth_url, {"X-Auth-User": user, "X-Auth-Key": key})
    return status, headers.get("x-auth-token"), headers.get("x-storage-url")


def test_rgw_serves_swift_put_and_get_with_the_inventory_credentials(
        lab_cluster: Cluster) -> None:
    creds = swift_credentials(lab_cluster)  # what the load drivers read
    status, token, storage_url = _swift_auth(creds.auth_url, creds.user, creds.key)
    assert status in (200, 204) and token and storage_url
    auth = {"X-Auth-Token": token}
    container = f"{storage_url}/fl-test-{uuid.uuid4().hex[:8]}"
    content = uuid.uuid4().bytes * 64
    assert _http("PUT", container, auth)[0] in (201, 202)
    try:
        assert _http("PUT", f"{container}/obj-1", auth, content)[0] == 201
        status, headers, got = _http("GET", f"{container}/obj-1", auth)
        assert (status, got) == (200, content)
        assert int(headers["content-length"]) == len(content)
        assert _http("GET", container, auth)[2].decode().split() == ["obj-1"]
    finally:
        _http("DELETE", f"{container}/obj-1", auth)
        assert _http("DELETE", container, auth)[0] == 204


def test_a_wrong_swift_key_gets_401_and_creates_nothing(lab_cluster: Cluster) -> None:
    creds = swift_credentials(lab_cluster)
    # auth v1 with a wrong key: the client's error, no token
    status, token, storage_url = _swift_auth(creds.auth_url, creds.user, "not-the-key")
    assert (status, token) == (401, None)
    # nor can a made-up token create a container
    _, _, storage_url = _swift_auth(creds.auth_url, creds.user, creds.key)
    container = f"fl-denied-{uuid.uuid4().hex[:8]}"
    status, _, _ = _http("PUT", f"{storage_url}/{container}",
                         {"X-Auth-Token": "AUTH_rgwtk00000000"})
    assert status == 401
    _, token, _ = _swift_auth(creds.auth_url, creds.user, creds.key)
    assert _http("HEAD", f"{storage_url}/{container}", {"X-Auth-Token": token})[0] == 404


def test_health_stays_ok_with_rgw_pools_tagged_rgw(lab_cluster: Cluster) -> None:
    with CephAdmin(lab_cluster.client["conf"]) as admin:
        state = admin.state()
        pools = admin.command("osd pool ls", detail="detail")
    assert (state.health, state.checks) == ("HEALTH_OK", ())
    assert state.pgs_by_state == {"active+clean": state.num_pgs}
    by_name = {p["pool_name"]: p for p in pools}
    for name in RGW_POOLS:
        assert by_name[name]["size"] == 3 and by_name[name]["min_size"] == 2, name
        assert list(by_name[name]["application_metadata"]) == ["rgw"], name


def test_s3_answers_signed_requests_and_refuses_a_wrong_secret(lab_cluster: Cluster) -> None:
    boto3 = pytest.importorskip("boto3")
    from botocore.config import Config
    from botocore.exceptions import ClientError

    s3 = lab_cluster.client["s3"]

    def client(secret: str):
        return boto3.client("s3", endpoint_url=s3["endpoint"], region_name="us-east-1",
                            aws_access_key_id=_secret(s3["access_key_file"]),
                            aws_secret_access_key=secret,
                            config=Config(s3={"addressing_style": "path"},
                                          retries={"max_attempts": 1}))

    good = client(_secret(s3["secret_key_file"]))
    bucket, content = f"fl-s3-{uuid.uuid4().hex[:8]}", uuid.uuid4().bytes * 64
    good.create_bucket(Bucket=bucket)
    try:
        good.put_object(Bucket=bucket, Key="obj-1", Body=content)
        assert good.get_object(Bucket=bucket, Key="obj-1")["Body"].read() == content
        with pytest.raises(ClientError) as refused:
            client("not-the-secret").put_object(Bucket=bucket, Key="obj-2", Body=b"x")
        assert refused.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
        assert [o["Key"] for o in good.list_objects_v2(Bucket=bucket)["Contents"]] == ["obj-1"]
    finally:
        good.delete_object(Bucket=bucket, Key="obj-1")
        good.delete_bucket(Bucket=bucket)


def _rgw_user_info(cluster: Cluster) -> dict:
    done = subprocess.run(["radosgw-admin", "-c", cluster.client["conf"], "--format=json",
                           "user", "info", "--uid=faultline"],
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def test_up_again_keeps_one_user_with_the_same_keys(lab_cluster: Cluster) -> None:
    files = {k: Path(v).read_text() for k, v in [
        ("swift", lab_cluster.client["swift_api"]["key_file"]),
        ("s3_access", lab_cluster.client["s3"]["access_key_file"]),
        ("s3_secret", lab_cluster.client["s3"]["secret_key_file"])]}
    assert ceph_lab.up()["mode"] == "running"
    info = _rgw_user_info(lab_cluster)
    assert [s["id"] for s in info["subusers"]] == ["faultline:swift"]
    assert [k["secret_key"] + "\n" for k in info["swift_keys"]] == [files["swift"]]
    assert [(k["access_key"] + "\n", k["secret_key"] + "\n") for k in info["keys"]] == [
        (files["s3_access"], files["s3_secret"])]


def test_rgw_restarts_with_the_inventory_start_command(lab_cluster: Cluster) -> None:
    rgw = lab_cluster.service("rgw.lab")
    # SIGTERM: a clean stop (a SIGKILL would leave watches that stall bucket creation 30 s)
    old = services.kill(lab_cluster, rgw, "TERM")
    deadline = time.monotonic() + 30
    while services.pid_of(lab_cluster, rgw) is not None:
        assert time.monotonic() < deadline, f"radosgw {old} still running 30 s after SIGTERM"
        time.sleep(0.1)
    services.start(lab_cluster, rgw)
    # radosgw forks, then writes its pid file: the start command may return before that
    # (CI once looked at once and found none)
    deadline = time.monotonic() + 30
    while (new := services.pid_of(lab_cluster, rgw)) is None:
        assert time.monotonic() < deadline, "radosgw not running 30 s after its start command"
        time.sleep(0.1)
    assert new != old
    assert ceph_rgw.wait_serving(lab_at(None)) >= 0


def test_down_would_see_a_running_rgw(lab_cluster: Cluster) -> None:
    # `down` checks leftovers(): a live gateway must show there (the fixture asserts none
    # is left after the suite's `down`)
    pid_file = lab_cluster.service("rgw.lab").pid_file
    assert pid_file in ceph_lab.leftovers()["processes"]
    assert ceph_lab.status()["daemons"]["rgw.lab"]["alive"]
