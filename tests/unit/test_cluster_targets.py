"""Prometheus' discovery of the inventory's clusters: each Ceph cluster's mgr exporter as its
inventory names it, each Swift cluster as the service exports it; a bad metrics URL in the
inventory is refused with the inventory's other problems."""

import pytest

from clusters.access.inventory import parse_inventory
from clusters.exceptions import InventoryError
from service.monitoring import embedded
from service.monitoring.cluster_targets import target_groups


def clusters(**client_of):
    spec = {name: {"kind": "ceph" if "ceph" in name else "swift",
                   "nodes": [{"name": "node1", "address": "10.0.0.1"}],
                   "client": {"conf": "/etc/ceph/ceph.conf", **client}
                   if "ceph" in name else client}
            for name, client in client_of.items()}
    return parse_inventory({"clusters": spec}).values()


def test_each_ceph_cluster_with_a_metrics_url_is_a_target_labelled_with_its_name():
    found = clusters(**{"prod-ceph": {"prometheus": "https://mgr.example:9283/metrics"},
                        "lab-ceph-reef": {"prometheus": "http://10.79.0.11:9283/metrics"},
                        "old-ceph": {}, "lab-swift": {}})

    assert target_groups(found, "ceph", "http", "127.0.0.1:8080") == [
        {"targets": ["10.79.0.11:9283"], "labels": {
            "cluster": "lab-ceph-reef", "__scheme__": "http", "__metrics_path__": "/metrics"}},
        {"targets": ["mgr.example:9283"], "labels": {
            "cluster": "prod-ceph", "__scheme__": "https", "__metrics_path__": "/metrics"}},
    ]


def test_each_swift_cluster_is_scraped_where_the_service_was_reached():
    found = clusters(**{"lab-swift": {}, "lab-ceph": {"prometheus": "http://127.0.0.1:9283/"}})

    assert target_groups(found, "swift", "https", "faultline.example:8443") == [
        {"targets": ["faultline.example:8443"], "labels": {
            "cluster": "lab-swift", "__scheme__": "https",
            "__metrics_path__": "/clusters/lab-swift/metrics"}}]


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of ceph, swift"):
        target_groups([], "s3", "http", "127.0.0.1:8080")


@pytest.mark.parametrize("url", [
    "ftp://mgr:9283/metrics", "http:///metrics", "http://mgr:9283/metrics?x=1",
    "http://user:secret@mgr:9283/metrics", "http://mgr:99999/metrics", "http://mgr;rm -rf/",
    9283])
def test_a_metrics_url_that_is_not_a_plain_http_url_is_an_inventory_problem(url):
    with pytest.raises(InventoryError, match="client.prometheus"):
        clusters(**{"prod-ceph": {"prometheus": url}})


def test_the_embedded_prometheus_discovers_clusters_from_the_service():
    config = embedded.prometheus_config("http://127.0.0.1:8080/")
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}

    for kind in ("ceph", "swift"):
        assert "static_configs" not in jobs[kind]
        (sd,) = jobs[kind]["http_sd_configs"]
        assert sd["url"] == f"http://127.0.0.1:8080/prometheus/clusters?kind={kind}"
        assert sd["authorization"]["type"] == "Bearer"
    assert "authorization" not in jobs["ceph"]  # the service's token stays with the service
    assert jobs["swift"]["authorization"]["type"] == "Bearer"
