"""The recovery settings a run stores, read from the real labs: the values their
configuration sets (the labs' shortened timers), the release's defaults beside them, and an
unreadable daemon said, not raised."""

from __future__ import annotations

import dataclasses

import pytest

from lab import swift_layout
from service.results.recovery_notes import setting_notes
from service.runs.recovery_settings import read

pytestmark = pytest.mark.lab


@pytest.fixture(params=["ceph", "swift"])
def system(request) -> str:
    return request.param


@pytest.fixture
def cluster(system, request):
    """The system's lab (tests/integration/streams.py sends the Swift case to the side
    stream)."""
    return request.getfixturevalue(f"{system}_cluster")


def _by_name(record: dict) -> dict[str, dict]:
    return {s["name"]: s for s in record["settings"]}


def test_the_settings_are_read_as_the_daemons_run_them(system, cluster):
    record = read(cluster, "rados" if system == "ceph" else "swift")
    assert record["errors"] == []
    got = _by_name(record)
    if system == "ceph":
        assert record["release"].startswith("ceph version 16.2.")
        # lab/ceph_layout.py's ceph.conf, the release's default from the cluster itself
        down_out = got["mon_osd_down_out_interval"]
        assert (down_out["value"], down_out["default"], down_out["where"],
                down_out["source"]) == ("30", "600", "mon.a", "file")
        assert (got["osd_heartbeat_grace"]["value"], got["osd_heartbeat_grace"]["default"]) \
            == ("6", "20")
        assert got["osd_heartbeat_grace"]["where"] == "osd.0 and 3 other OSDs up"
        assert got["osd_op_queue"]["source"] == "default"
        assert (got["pool faultline size"]["value"], got["pool faultline min_size"]["value"]) \
            == ("3", "2")
        assert not any(name.startswith("pool default.rgw") for name in got)
        assert "mon_osd_down_out_interval is 30 s, 20x shorter than Ceph 16.2.15's default " \
               "600 s" in setting_notes(record)
    else:
        assert record["release"].startswith("swift 2.")
        interval = got["interval"]
        assert (interval["value"], interval["default"], interval["source"]) == (
            str(swift_layout.OBJECT_REPLICATOR_INTERVAL_S), "30", "conf")
        assert interval["where"].startswith("node1:") and \
            interval["where"].endswith(".conf and 3 other nodes")
        assert interval["differs"] == []  # every node's file says the same
        assert got["concurrency"]["value"] == str(swift_layout.OBJECT_REPLICATOR_CONCURRENCY)
        assert (got["handoffs_first"]["value"], got["handoffs_first"]["source"]) == (
            "false", "default")
        assert got["node_timeout"]["value"] == "10"
        assert got["object ring replicas"]["value"] == "3"
        assert "interval is 10 s, 3x shorter than swift" in " ".join(setting_notes(record))


def test_a_load_through_rgw_reads_the_bucket_data_pool(ceph_cluster):
    got = _by_name(read(ceph_cluster, "s3"))
    assert got["pool default.rgw.buckets.data size"]["value"] == "3"
    assert "pool faultline size" not in got


@pytest.mark.parametrize("system", ["swift"])  # the Swift lab's stream (streams.py)
def test_a_daemon_that_is_not_running_is_an_error_of_the_record(cluster, tmp_path):
    # the proxy's pid file names nothing: its timeouts are unknown, the rest is read
    swift_cluster = cluster
    proxy = swift_cluster.service("proxy-server")
    gone = dataclasses.replace(proxy, pid_file=str(tmp_path / "gone.pid"))
    cluster = dataclasses.replace(swift_cluster, services=tuple(
        gone if s is proxy else s for s in swift_cluster.services))
    record = read(cluster, "swift")
    assert record["errors"] == ["proxy-server: proxy-server is not running: its "
                                "configuration cannot be read"]
    got = _by_name(record)
    assert "node_timeout" not in got and got["interval"]["value"] == "10"
