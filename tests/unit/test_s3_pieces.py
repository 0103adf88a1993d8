"""The S3 driver's pure parts: its error classes, the bucket names it refuses, and the key
pair read by reference from the inventory (every problem in one message). The driver
itself is tested on the Ceph lab's RGW (tests/integration/test_s3_driver.py)."""

import pytest

from clusters.access.credentials import S3Credentials, s3_credentials
from clusters.access.inventory import Cluster, Node
from clusters.exceptions import CredentialsError
from loadgen.drivers import driver_for
from loadgen.exceptions import DriverError
from loadgen.s3_driver import S3Driver, error_class
from loadgen.workload import parse_workload

NODES = (Node(name="node1", address="127.0.0.1"),)
ENDPOINT = "http://127.0.0.1:7480"
NO_SUCH_KEY = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code>'
               b"<BucketName>faultline-000</BucketName><RequestId>tx0</RequestId></Error>")


def _cluster(kind: str = "ceph", **s3) -> Cluster:
    client = {"conf": "/etc/ceph/ceph.conf"} if kind == "ceph" else {}
    return Cluster(name=f"lab-{kind}", kind=kind, nodes=NODES,
                   client={**client, **({"s3": s3} if s3 else {})})


@pytest.fixture
def key_files(tmp_path):
    access, secret = tmp_path / "s3.access_key", tmp_path / "s3.secret_key"
    for path, value in ((access, "AKIDLAB\n"), (secret, "lab-secret\n")):
        path.write_text(value)
        path.chmod(0o600)
    return {"access_key_file": str(access), "secret_key_file": str(secret)}


def test_an_error_class_is_the_status_and_the_s3_code_of_the_body():
    assert error_class(200, b"") is None
    assert error_class(204, NO_SUCH_KEY) is None
    assert error_class(404, NO_SUCH_KEY) == "404 NoSuchKey"
    assert error_class(503, b"<Error><Code>SlowDown</Code></Error>") == "503 SlowDown"
    assert error_class(404, b"") == "404"  # a HEAD's answer has no body
    assert error_class(500, b"<html>proxy error</html>") == "500"
    assert error_class(403, b"<Code>Bad code with spaces</Code>") == "403"


@pytest.mark.parametrize("bucket", ["ab", "Faultline-000", "faultline_000", "-faultline",
                                    "faultline-", "a" * 64, "fault..line"])
def test_a_bucket_name_s3_refuses_is_refused_before_anything_is_sent(bucket):
    credentials = S3Credentials(ENDPOINT, "AKIDLAB", "lab-secret")
    with pytest.raises(DriverError, match="S3 refuses the bucket name"):
        S3Driver(credentials, ["faultline-000", bucket])


def test_the_key_pair_is_read_from_its_files_without_the_newline(key_files):
    found = s3_credentials(_cluster(endpoint=ENDPOINT, **key_files))
    assert found == S3Credentials(ENDPOINT, "AKIDLAB", "lab-secret", "us-east-1")
    assert "lab-secret" not in repr(found) and "AKIDLAB" not in repr(found)


@pytest.mark.parametrize("secret", ["lab\r\nX-Injected: 1", "lab secret", "lab\x07"])
def test_a_key_that_would_break_its_header_is_refused(key_files, secret, monkeypatch):
    with open(key_files["secret_key_file"], "w") as f:
        f.write(secret + "\n")
    with pytest.raises(CredentialsError, match="space or a control character"):
        s3_credentials(_cluster(endpoint=ENDPOINT, **key_files))
    monkeypatch.setenv("FL_TEST_SECRET", secret)
    with pytest.raises(CredentialsError, match="space or a control character"):
        s3_credentials(_cluster(endpoint=ENDPOINT, access_key_file=key_files["access_key_file"],
                                secret_key_env="FL_TEST_SECRET"))


def test_the_key_pair_may_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("FL_TEST_S3_ACCESS", "AKIDENV")
    monkeypatch.setenv("FL_TEST_S3_SECRET", "env-secret")
    found = s3_credentials(_cluster(endpoint=ENDPOINT, access_key_env="FL_TEST_S3_ACCESS",
                                    secret_key_env="FL_TEST_S3_SECRET", region="lab"))
    assert (found.access_key, found.secret_key, found.region) == ("AKIDENV", "env-secret",
                                                                  "lab")


def test_every_problem_of_the_s3_section_is_in_one_message():
    with pytest.raises(CredentialsError) as refused:
        s3_credentials(_cluster(endpoint="ftp://x", secret_key="inline", access_key_file="a",
                                access_key_env="B", region=""))
    message = str(refused.value)
    assert "client.s3.endpoint must be an http:// or https:// URL" in message
    assert "client.s3.region must be a name" in message
    assert "exactly one of access_key_file and access_key_env" in message
    assert "client.s3.secret_key must not hold the key itself" in message
    assert "exactly one of secret_key_file and secret_key_env" in message


def test_a_cluster_without_s3_or_with_an_unreadable_key_says_so(tmp_path, key_files):
    with pytest.raises(CredentialsError, match="has no S3 API configured"):
        s3_credentials(_cluster())
    (tmp_path / "s3.secret_key").chmod(0o644)
    with pytest.raises(CredentialsError, match="S3 secret key file"):
        s3_credentials(_cluster(endpoint=ENDPOINT, **key_files))


@pytest.mark.parametrize("kind", ["ceph", "swift"])
def test_s3_is_a_load_api_of_both_systems(key_files, kind):
    workload = parse_workload({"containers": 2, "objects_per_container": 10,
                               "object_size": 4096, "mix": {"read": 100}, "rate": 10})
    driver = driver_for(_cluster(kind, endpoint=ENDPOINT, **key_files), workload, "s3")
    assert isinstance(driver, S3Driver) and driver.containers == ["faultline-000",
                                                                  "faultline-001"]


def test_a_swift_cluster_without_client_s3_says_so(key_files):
    workload = parse_workload({"mix": {"read": 100}, "rate": 10})
    with pytest.raises(CredentialsError, match="has no S3 API configured"):
        driver_for(_cluster("swift"), workload, "s3")


def test_a_completion_that_failed_after_its_200_is_of_unknown_outcome():
    from loadgen.outcomes import outcome
    from loadgen.s3_driver import _error_after_200, _text_of
    from loadgen.swift_http import Response

    failed = Response(200, "OK", b"\n\n<Error><Code>InternalError</Code></Error>", None)
    done = Response(200, "OK", b"<CompleteMultipartUploadResult><ETag>x</ETag>"
                               b"</CompleteMultipartUploadResult>", None)
    assert _error_after_200(failed) == "200 InternalError"
    assert outcome(False, _error_after_200(failed)) == "unknown"
    assert _error_after_200(done) is None
    initiated = (b'<?xml version="1.0"?><InitiateMultipartUploadResult xmlns="http://s3.'
                 b'amazonaws.com/doc/2006-03-01/"><Bucket>b</Bucket><Key>k</Key>'
                 b"<UploadId>2~abc</UploadId></InitiateMultipartUploadResult>")
    assert _text_of(initiated, "UploadId") == "2~abc"
    assert _text_of(b"<not xml", "UploadId") is None


@pytest.mark.parametrize(("workload", "message"), [
    ({"multipart_above": 0}, "multipart_above must be >= 1, not 0"),
    ({"part_size": 1024}, "part_size must be >= 5242880, not 1024"),
])
def test_a_multipart_setting_s3_refuses_is_refused_with_the_workload(workload, message):
    from loadgen.exceptions import WorkloadError

    with pytest.raises(WorkloadError, match=message):
        parse_workload(workload, memory=2 ** 50)


def test_multipart_is_refused_for_an_api_without_it(key_files):
    workload = parse_workload({"multipart_above": 10 * 1024 ** 2})
    with pytest.raises(DriverError, match="multipart_above applies to the S3 API only, "
                                          "not to 'rados'"):
        driver_for(_cluster("ceph", endpoint=ENDPOINT, **key_files), workload, "rados")
    driver = driver_for(_cluster("ceph", endpoint=ENDPOINT, **key_files), workload, "s3")
    assert (driver.multipart_above, driver.part_size) == (10 * 1024 ** 2, 8 * 1024 ** 2)
