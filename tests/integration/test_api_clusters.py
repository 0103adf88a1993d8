"""The clusters API: the inventory's clusters, and never a secret nor where one is kept."""

from __future__ import annotations

import json

import pytest
import yaml

from service.web.cluster_info import is_secret


def _secret_values(value, under_secret: bool = False) -> set[str]:
    """Every value kept under a key that names a secret, at any depth of the inventory,
    plus the start commands (which may carry one)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            found |= _secret_values(item, under_secret or is_secret(str(key))
                                    or key in ("start", "ssh"))
    elif isinstance(value, list):
        for item in value:
            found |= _secret_values(item, under_secret)
    elif under_secret and isinstance(value, str) and value not in ("root",):
        found.add(value)
    return found


@pytest.fixture
def viewer(api_as):
    return api_as("viewer")


def test_the_clusters_of_the_inventory_are_listed_with_their_shape(viewer):
    response = viewer.get("/api/v1/clusters")

    assert response.status_code == 200
    clusters = {c["name"]: c for c in response.json["items"]}
    assert list(clusters) == ["lab-ceph", "lab-swift"]
    ceph = clusters["lab-ceph"]
    assert (ceph["kind"], ceph["zones"]) == ("ceph", ["zone1", "zone2", "zone3"])
    assert ceph["nodes"][0] == {"name": "node1", "address": "192.0.2.11", "zone": "zone1",
                                "power": "ipmi"}
    assert [n["power"] for n in clusters["lab-swift"]["nodes"]] == ["ssh", "ssh"]
    assert ceph["disks"][1] == {"node": "node2", "device": "/dev/sdb", "osd": 1,
                                "mount": "/var/lib/ceph/osd/ceph-1", "swift_device": None}
    assert ceph["services"][4] == {"name": "mon.a", "kind": "mon", "node": None,
                                   "unit": None, "pid_file": "/run/ceph/ceph-mon.a.pid"}
    assert ceph["client"] == {"conf": "/etc/ceph/ceph.conf", "pool": "faultline",
                              "swift_api": {"auth_url": "http://192.0.2.1:7480/auth/1.0",
                                            "user": "faultline:swift"},
                              "s3": {"endpoint": "http://192.0.2.1:7480"},
                              "prometheus": "http://192.0.2.1:9283/metrics"}


def test_one_cluster_reads_as_in_the_list(viewer):
    listed = viewer.get("/api/v1/clusters").json["items"][1]

    response = viewer.get("/api/v1/clusters/lab-swift")

    assert (response.status_code, response.json) == (200, listed)


def test_an_unknown_cluster_is_404(viewer, api_inventory):
    response = viewer.get("/api/v1/clusters/atlantis")

    assert (response.status_code, response.json) == (404, {
        "error": f"unknown cluster 'atlantis' in {api_inventory} (known: lab-ceph, lab-swift)"})


def test_no_secret_nor_where_one_is_kept_is_ever_returned(viewer, api_inventory):
    secrets = _secret_values(yaml.safe_load(api_inventory.read_text()))
    assert len(secrets) == 9  # the test sees every reference of the inventory

    shown = json.dumps([viewer.get("/api/v1/clusters").json,
                        viewer.get("/api/v1/clusters/lab-ceph").json,
                        viewer.get("/api/v1/clusters/lab-swift").json])

    assert [s for s in secrets if s in shown] == []
    assert "PATH" not in shown and "SECRET" not in shown and "KEY-ENV" not in shown
