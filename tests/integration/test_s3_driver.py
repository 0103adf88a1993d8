"""The S3 driver on the Ceph lab's RGW and on the Swift lab's proxy (s3api): objects
round-trip with their bytes, every failure is classed by its status and S3 code, a wrong key
pair is one error that creates nothing, and the catalogue's kill of one storage process
under an S3 load (an OSD, an object server) runs from `faultline run` and the stock
`chaos run`, with its figures and nothing lost. The Swift cases run in the side stream."""

from __future__ import annotations

import subprocess
import threading
import uuid
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from cleaning import clean
from short_runs import shortened, stock_chaos_run
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session
from swiftclient.client import ClientException as SwiftClientException
from swiftclient.client import Connection as SwiftConnection

from clusters.access.credentials import S3Credentials, s3_credentials, swift_credentials
from clusters.polling import poll_until
from loadgen.exceptions import DriverError
from loadgen.payload import PayloadSource
from loadgen.s3_driver import S3Driver
from service.store.models import LedgerEntry, Run

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = {"ceph": REPO / "experiments" / "ceph-s3-kill-osd.json",
               "swift": REPO / "experiments" / "swift-s3-kill-object-server.json"}

pytestmark = pytest.mark.lab


@pytest.fixture(params=["ceph", "swift"])
def system(request) -> str:
    return request.param


# the test's short phases (the experiments' tails stay: Swift's is 30 s, see its description).
# The Swift lab's s3api serves about 60 GETs/s alone: at the experiment's 20 ops/s, beside
# the main stream's S3 run on Ceph, a queue built up in one baseline (refused, rightly)
SHORT = {"ceph": {"tail_s": 3}, "swift": {"fault_hold_s": 15, "rate": 10}}


@pytest.fixture
def cluster(system, request):
    """The system's lab (by name: tests/integration/streams.py sends the Swift cases to the
    side stream)."""
    return request.getfixturevalue(f"{system}_cluster")


@pytest.fixture
def cluster_env(cluster, env):
    """`env`, with the experiments' cluster variable naming this system's lab."""
    return {**env, "FAULTLINE_CLUSTER": cluster.name}


class Outcomes:
    """The completions of a batch of operations, waited for together."""

    def __init__(self, expected: int):
        self.left = threading.Semaphore(0)
        self.expected = expected
        self.results: dict[str, tuple[bool, int, str | None, bytes | None]] = {}

    def done_for(self, name: str):
        def done(ok, nbytes, error, data):
            self.results[name] = (ok, nbytes, error, data)
            self.left.release()
        return done

    def wait(self) -> dict:
        for _ in range(self.expected):
            assert self.left.acquire(timeout=60), "an S3 operation never completed"
        return self.results


def _client(credentials: S3Credentials):
    return boto3.client("s3", endpoint_url=credentials.endpoint, region_name="us-east-1",
                        aws_access_key_id=credentials.access_key,
                        aws_secret_access_key=credentials.secret_key,
                        config=Config(s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}))


@pytest.fixture
def bucket(cluster):
    """A fresh bucket name; the bucket and whatever is left in it are removed after."""
    name = f"fl-s3-test-{uuid.uuid4().hex[:8]}"
    yield name
    client = _client(s3_credentials(cluster))
    try:
        for item in client.list_objects_v2(Bucket=name).get("Contents", []):
            client.delete_object(Bucket=name, Key=item["Key"])
        client.delete_bucket(Bucket=name)
    except ClientError as exc:
        assert exc.response["Error"]["Code"] == "NoSuchBucket", exc


def _run(driver: S3Driver, op: str, names: list[str], payloads: PayloadSource) -> dict:
    outcomes = Outcomes(len(names))
    for name in names:
        if op == "write":
            driver.write(driver.containers[0], name, payloads.content(name),
                         outcomes.done_for(name))
        elif op == "read":
            driver.read(driver.containers[0], name, payloads.size_of(name),
                        outcomes.done_for(name))
        else:
            driver.delete(driver.containers[0], name, outcomes.done_for(name))
    return outcomes.wait()


def test_objects_round_trip_and_each_failure_is_classed(cluster, bucket):
    credentials = s3_credentials(cluster)
    payloads = PayloadSource(7, 4096, 4096)
    names = [f"obj-{i}" for i in range(20)]
    driver = S3Driver(credentials, [bucket], concurrency=4)
    driver.connect()
    try:
        written = _run(driver, "write", names, payloads)
        assert all(ok for ok, *_ in written.values()), written
        read = _run(driver, "read", [*names, "never-written"], payloads)
        assert all(read[n][0] and read[n][3] == payloads.content(n) for n in names)
        assert read["never-written"][:3] == (False, 0, "404 NoSuchKey")
        # what the server itself lists is what was acknowledged
        listed = _client(credentials).list_objects_v2(Bucket=bucket)["Contents"]
        assert sorted(o["Key"] for o in listed) == sorted(names)
        deleted = _run(driver, "delete", names, payloads)
        assert all(ok for ok, *_ in deleted.values()), deleted
        gone = _run(driver, "read", names[:3], payloads)
        assert {r[2] for r in gone.values()} == {"404 NoSuchKey"}
    finally:
        driver.close()
    assert driver.connections_opened <= 4  # keep-alive: one connection per worker
    again = S3Driver(credentials, [bucket], concurrency=1)
    again.connect()  # the bucket exists and is ours: not an error
    again.close()


def test_a_large_object_is_a_multipart_upload_and_a_refused_one_leaves_no_parts(
        system, cluster, bucket):
    credentials = s3_credentials(cluster)
    size, mib = 12 * 1024 ** 2, 1024 ** 2
    payloads = PayloadSource(11, size, size)
    driver = S3Driver(credentials, [bucket], concurrency=2, multipart_above=8 * mib,
                      part_size=5 * mib)
    driver.connect()
    try:
        written = _run(driver, "write", ["big-0"], payloads)
        assert written["big-0"][:3] == (True, size, None), written
        read = _run(driver, "read", ["big-0"], payloads)
        assert read["big-0"][0] and read["big-0"][3] == payloads.content("big-0")
        # a multipart object's ETag names its parts: 5 + 5 + 2 MiB
        head = _client(credentials).head_object(Bucket=bucket, Key="big-0")
        assert head["ETag"].strip('"').endswith("-3"), head["ETag"]
        # parts under S3's 5 MiB minimum: the completion is refused, the upload aborted
        driver.part_size = mib
        refused = _run(driver, "write", ["big-1"], payloads)
        assert refused["big-1"][:3] == (False, 0, "400 EntityTooSmall"), refused
    finally:
        driver.close()
    assert _client(credentials).list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    with pytest.raises(ClientError):
        _client(credentials).head_object(Bucket=bucket, Key="big-1")
    if system == "swift":  # s3api keeps the parts in a container of its own
        _client(credentials).delete_object(Bucket=bucket, Key="big-0")
        _delete_swift_container(cluster, f"{bucket}+segments")


def _delete_swift_container(cluster, container: str) -> None:
    """Gone or deleted; a 409 (its listing still shows the segments just deleted) waits."""
    creds = swift_credentials(cluster)
    conn = SwiftConnection(creds.auth_url, creds.user, creds.key, retries=1)

    def deleted() -> bool:
        try:
            conn.delete_container(container)
        except SwiftClientException as exc:
            assert exc.http_status in (404, 409), exc
            return exc.http_status == 404
        return True
    try:
        poll_until(f"container {container} deleted", deleted, timeout_s=60)
    finally:
        conn.close()


def test_a_wrong_secret_is_one_error_and_creates_nothing(cluster, bucket):
    good = s3_credentials(cluster)
    wrong = S3Credentials(good.endpoint, good.access_key, "not-the-secret")
    with pytest.raises(DriverError) as refused:
        S3Driver(wrong, [bucket]).check_access()
    assert str(refused.value) == (f"S3 at {good.endpoint} refused the key pair: "
                                  "403 SignatureDoesNotMatch")
    driver = S3Driver(wrong, [bucket])
    with pytest.raises(DriverError, match="403 SignatureDoesNotMatch"):
        driver.connect()
    with pytest.raises(ClientError) as missing:
        _client(good).head_bucket(Bucket=bucket)
    assert missing.value.response["Error"]["Code"] == "404"
    with pytest.raises(DriverError, match="cannot reach S3 at http://127.0.0.1:9"):
        S3Driver(S3Credentials("http://127.0.0.1:9", "a", "b"), [bucket]).check_access()


def _latest_run(url: str) -> Run:
    with Session(create_engine(url)) as session:
        return session.execute(select(Run).order_by(Run.id.desc()).limit(1)).scalar_one()


def _assert_recorded_s3_kill(run: Run) -> None:
    f = run.figures
    assert run.status == "completed", (run.status, run.error)
    assert run.load_api == "s3"
    assert f["baseline_ops"] > 0
    assert f["time_to_detect_s"] is not None, f["reasons"]
    # what decided the recovery, read before the fault (service/runs/recovery_settings.py)
    settings = run.recovery_settings
    assert settings["errors"] == [] and settings["system"] == run.cluster_kind
    assert {"mon_osd_down_out_interval", "interval"} & {s["name"] for s in settings["settings"]}
    assert f["time_to_full_redundancy_after_restore_s"] is not None, f["reasons"]
    assert f["lost_objects"] == 0 and f["corrupt_objects"] == 0
    assert f["verified_objects"] > 0


def test_faultline_run_kills_a_storage_process_under_an_s3_load_and_loses_nothing(
        system, cluster, database_url, cluster_env, tmp_path):
    env = cluster_env
    experiment = shortened(EXPERIMENTS[system], tmp_path, **SHORT[system])
    done = subprocess.run(["faultline", "run", str(experiment)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "lost objects                 0" in done.stdout
    run = _latest_run(database_url)
    _assert_recorded_s3_kill(run)

    # verify and clean go through the run's own API: delete one acknowledged object behind
    # the ledger's back, through S3; verify finds exactly it missing (on Ceph, librados
    # would have found every one missing, and clean deleted none)
    with Session(create_engine(database_url)) as session:
        victim = session.execute(select(LedgerEntry).where(LedgerEntry.run_id == run.id)
                                 .limit(1)).scalar_one()
    _client(s3_credentials(cluster)).delete_object(Bucket=victim.container, Key=victim.name)
    audit = subprocess.run(["faultline", "verify", str(run.id), "--json"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert audit.returncode == 1, audit.stdout + audit.stderr
    assert f"{victim.container}/{victim.name}" in audit.stdout
    assert '"lost_objects": 1' in audit.stdout
    # S3's DELETE answers 204 whether or not the object was there: the lost one counts as
    # deleted; what matters is that the run's objects left the cluster
    cleaned = clean(run.id, env)
    assert (cleaned["deleted"], cleaned["failed"]) == (cleaned["objects"], 0), cleaned
    with Session(create_engine(database_url)) as session:
        entries = session.execute(select(LedgerEntry).where(LedgerEntry.run_id == run.id)
                                  ).scalars().all()
    s3 = _client(s3_credentials(cluster))
    for entry in entries[:20]:
        with pytest.raises(ClientError) as gone:
            s3.head_object(Bucket=entry.container, Key=entry.name)
        assert gone.value.response["Error"]["Code"] == "404"


@pytest.mark.full  # the same experiment as above, under the stock CLI
def test_stock_chaos_run_kills_a_storage_process_under_an_s3_load(system, cluster,
                                                                  database_url, cluster_env,
                                                                  tmp_path):
    env = cluster_env
    done = stock_chaos_run(EXPERIMENTS[system], env, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run = _latest_run(database_url)
    _assert_recorded_s3_kill(run)
    cleaned = clean(run.id, env)  # its objects leave the cluster
    assert (cleaned["deleted"], cleaned["failed"]) == (cleaned["objects"], 0), cleaned
