"""Swift API credentials: read by reference from the inventory, every problem in one message."""

import pytest

from clusters.access.credentials import SwiftCredentials, swift_credentials
from clusters.access.inventory import Cluster, Node
from clusters.exceptions import ClusterError, CredentialsError

NODES = (Node(name="node1", address="127.0.0.1"),)
SWIFT_AUTH = "http://127.0.0.1:8280/auth/v1.0"
RGW_AUTH = "http://127.0.0.1:7480/auth/1.0"


def swift_cluster(**client):
    return Cluster(name="lab-swift", kind="swift", nodes=NODES, client=client)


def ceph_cluster(**client):
    return Cluster(name="lab-ceph", kind="ceph", nodes=NODES,
                   client={"conf": "/etc/ceph/ceph.conf", **client})


@pytest.fixture
def key_file(tmp_path):
    path = tmp_path / "swift.key"
    path.write_text("testing\n")
    path.chmod(0o600)
    return path


def test_a_swift_cluster_key_is_read_from_its_key_file_without_the_newline(key_file):
    cluster = swift_cluster(auth_url=SWIFT_AUTH, user="test:tester", key_file=str(key_file))

    assert swift_credentials(cluster) == SwiftCredentials(SWIFT_AUTH, "test:tester", "testing")


def test_a_swift_cluster_key_is_read_from_its_environment_variable(monkeypatch):
    monkeypatch.setenv("FAULTLINE_TEST_SWIFT_KEY", "secret")
    cluster = swift_cluster(auth_url=SWIFT_AUTH, user="test:tester",
                            key_env="FAULTLINE_TEST_SWIFT_KEY")

    assert swift_credentials(cluster).key == "secret"


def test_a_ceph_cluster_uses_the_rgw_swift_api_section(key_file):
    cluster = ceph_cluster(swift_api={"auth_url": RGW_AUTH, "user": "faultline:swift",
                                      "key_file": str(key_file)})

    assert swift_credentials(cluster) == SwiftCredentials(RGW_AUTH, "faultline:swift", "testing")


def test_the_key_never_shows_in_the_repr():
    assert "s3cr3t" not in repr(SwiftCredentials(SWIFT_AUTH, "test:tester", "s3cr3t"))


def test_credentials_errors_are_cluster_errors():
    assert issubclass(CredentialsError, ClusterError)


@pytest.mark.parametrize(("cluster", "message"), [
    (ceph_cluster(),
     "cluster 'lab-ceph' has no Swift API configured (set client.swift_api.auth_url, "
     "client.swift_api.user and client.swift_api.key_file or client.swift_api.key_env)"),
    (swift_cluster(),
     "cluster 'lab-swift' has no Swift API configured (set client.auth_url, client.user "
     "and client.key_file or client.key_env)"),
    (ceph_cluster(swift_api="http://127.0.0.1:7480"),
     "cluster 'lab-ceph': client.swift_api must be a mapping"),
    (swift_cluster(auth_url=SWIFT_AUTH),
     "cluster 'lab-swift': client lacks user, key_file or key_env"),
    (ceph_cluster(swift_api={"user": "faultline:swift", "key_env": "K"}),
     "cluster 'lab-ceph': client.swift_api lacks auth_url"),
    (swift_cluster(auth_url=SWIFT_AUTH, user="test:tester", key_file="/k", key_env="K"),
     "cluster 'lab-swift': client sets both key_file and key_env; keep one"),
    (swift_cluster(auth_url=SWIFT_AUTH, user="test:tester", key="testing"),
     "cluster 'lab-swift': client lacks key_file or key_env; "
     "client.key must not hold the key itself: use key_file or key_env"),
    (swift_cluster(auth_url="127.0.0.1:8280/auth/v1.0", user=7, key_env="K"),
     "cluster 'lab-swift': client.auth_url must be an http:// or https:// URL, "
     "not '127.0.0.1:8280/auth/v1.0'; client.user must be a string, not 7"),
])
def test_a_missing_or_malformed_swift_api_is_named_in_one_message(cluster, message):
    with pytest.raises(CredentialsError) as raised:
        swift_credentials(cluster)

    assert str(raised.value) == message


def test_a_key_file_others_can_read_is_refused_with_its_mode(key_file):
    key_file.chmod(0o644)
    cluster = swift_cluster(auth_url=SWIFT_AUTH, user="test:tester", key_file=str(key_file))

    with pytest.raises(CredentialsError) as raised:
        swift_credentials(cluster)

    assert str(raised.value) == (
        f"refusing the Swift key file of cluster 'lab-swift' {key_file}: other users can read "
        f"or change it (mode 0644); make it private with `chmod 600 {key_file}`")


def test_an_unreadable_key_file_is_named_with_its_path(tmp_path):
    path = tmp_path / "absent.key"
    cluster = swift_cluster(auth_url=SWIFT_AUTH, user="test:tester", key_file=str(path))

    with pytest.raises(CredentialsError) as raised:
        swift_credentials(cluster)

    assert str(raised.value) == (f"cannot read the Swift key file {path} of cluster "
                                 "'lab-swift': No such file or directory")


def test_an_empty_key_file_is_refused(tmp_path):
    path = tmp_path / "empty.key"
    path.write_text("\n")
    cluster = swift_cluster(auth_url=SWIFT_AUTH, user="test:tester", key_file=str(path))

    with pytest.raises(CredentialsError) as raised:
        swift_credentials(cluster)

    assert str(raised.value) == f"the Swift key file {path} of cluster 'lab-swift' is empty"


def test_an_unset_key_variable_is_named(monkeypatch):
    monkeypatch.delenv("FAULTLINE_TEST_SWIFT_KEY", raising=False)
    cluster = ceph_cluster(swift_api={"auth_url": RGW_AUTH, "user": "faultline:swift",
                                      "key_env": "FAULTLINE_TEST_SWIFT_KEY"})

    with pytest.raises(CredentialsError) as raised:
        swift_credentials(cluster)

    assert str(raised.value) == ("environment variable FAULTLINE_TEST_SWIFT_KEY (the Swift key "
                                 "of cluster 'lab-ceph') is not set")


def test_an_empty_key_variable_is_refused(monkeypatch):
    monkeypatch.setenv("FAULTLINE_TEST_SWIFT_KEY", "")
    cluster = swift_cluster(auth_url=SWIFT_AUTH, user="test:tester",
                            key_env="FAULTLINE_TEST_SWIFT_KEY")

    with pytest.raises(CredentialsError) as raised:
        swift_credentials(cluster)

    assert str(raised.value) == ("environment variable FAULTLINE_TEST_SWIFT_KEY (the Swift key "
                                 "of cluster 'lab-swift') is empty")
