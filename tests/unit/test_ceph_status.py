"""parse_status: the monitors' `status` JSON becomes a CephState (pure, no cluster)."""

import copy

import pytest

from clusters.ceph.admin import CephState, parse_status

HEALTHY = {  # trimmed from a reef `ceph status -f json`
    "fsid": "3f1c0b8e-0000-4000-8000-000000000000",
    "health": {"status": "HEALTH_OK", "checks": {}, "mutes": []},
    "osdmap": {"epoch": 21, "num_osds": 3, "num_up_osds": 3, "osd_up_since": 1700000000,
               "num_in_osds": 3, "osd_in_since": 1700000000, "num_remapped_pgs": 0},
    "pgmap": {"pgs_by_state": [{"state_name": "active+clean", "count": 33}],
              "num_pgs": 33, "num_pools": 2, "num_objects": 200, "data_bytes": 819200},
}


def one_osd_down():
    status = copy.deepcopy(HEALTHY)
    status["health"] = {"status": "HEALTH_WARN", "checks": {
        "PG_DEGRADED": {"severity": "HEALTH_WARN"},
        "OSD_DOWN": {"severity": "HEALTH_WARN"}}}
    status["osdmap"]["num_up_osds"] = 2
    status["pgmap"]["pgs_by_state"] = [
        {"state_name": "active+undersized+degraded", "count": 21},
        {"state_name": "active+clean", "count": 12}]
    status["pgmap"]["degraded_objects"] = 130
    status["pgmap"]["degraded_total"] = 600
    return status


def test_a_healthy_status_is_parsed_field_by_field():
    assert parse_status(HEALTHY) == CephState(
        health="HEALTH_OK", checks=(), num_osds=3, num_up_osds=3, num_in_osds=3, num_pgs=33,
        pgs_by_state={"active+clean": 33}, degraded_objects=0, misplaced_objects=0)


def test_a_healthy_cluster_is_fully_redundant_with_no_fault_and_nothing_at_risk():
    state = parse_status(HEALTHY)

    assert (state.fully_redundant, state.fault_seen, state.at_risk) == (True, False, False)


def test_a_down_osd_is_seen_as_a_fault_with_data_at_risk():
    state = parse_status(one_osd_down())

    assert state.health == "HEALTH_WARN"
    assert state.checks == ("OSD_DOWN", "PG_DEGRADED")
    assert state.clean_pgs == 12
    assert state.degraded_objects == 130
    assert (state.fully_redundant, state.fault_seen, state.at_risk) == (False, True, True)


def test_an_osd_down_health_check_alone_is_a_fault():
    status = copy.deepcopy(HEALTHY)
    status["health"] = {"status": "HEALTH_WARN", "checks": {"OSD_DOWN": {}}}

    assert parse_status(status).fault_seen is True


def test_health_ok_with_a_pg_not_clean_is_not_fully_redundant():
    status = copy.deepcopy(HEALTHY)
    status["pgmap"]["pgs_by_state"] = [{"state_name": "active+clean", "count": 32},
                                       {"state_name": "peering", "count": 1}]

    assert parse_status(status).fully_redundant is False


def test_degraded_objects_alone_are_at_risk_and_not_fully_redundant():
    status = copy.deepcopy(HEALTHY)
    status["pgmap"]["degraded_objects"] = 1

    state = parse_status(status)

    assert state.at_risk is True
    assert state.fully_redundant is False


def test_undersized_pgs_without_degraded_objects_are_at_risk():
    status = copy.deepcopy(HEALTHY)
    status["pgmap"]["pgs_by_state"] = [{"state_name": "active+undersized", "count": 33}]

    assert parse_status(status).at_risk is True


def test_misplaced_objects_are_not_at_risk():
    status = copy.deepcopy(HEALTHY)
    status["pgmap"]["misplaced_objects"] = 40
    status["pgmap"]["pgs_by_state"] = [{"state_name": "active+remapped+backfilling",
                                        "count": 33}]

    state = parse_status(status)

    assert state.misplaced_objects == 40
    assert state.at_risk is False


def test_the_osdmap_nested_once_more_by_older_releases_is_read():
    status = copy.deepcopy(HEALTHY)
    status["osdmap"] = {"osdmap": {"num_osds": 3, "num_up_osds": 2, "num_in_osds": 3}}

    state = parse_status(status)

    assert (state.num_osds, state.num_up_osds, state.num_in_osds) == (3, 2, 3)
    assert state.fault_seen is True


def test_an_empty_status_is_unknown_and_never_fully_redundant():
    state = parse_status({})

    assert state.health == "UNKNOWN"
    assert (state.num_osds, state.num_pgs, state.pgs_by_state) == (0, 0, {})
    assert state.fully_redundant is False


def test_as_dict_carries_the_derived_flags():
    summary = parse_status(one_osd_down()).as_dict()

    assert (summary["fully_redundant"], summary["fault_seen"], summary["at_risk"]) == \
        (False, True, True)
    assert summary["checks"] == ["OSD_DOWN", "PG_DEGRADED"]


@pytest.mark.parametrize(("state", "clean"), [
    ("active+clean", True),
    ("active+clean+laggy", True),
    ("active+clean+scrubbing+deep", True),
    ("active+undersized+degraded", False),
    ("active+clean+remapped", False),
    ("peering", False),
])
def test_transient_flags_that_cost_no_copy_keep_a_pg_clean(state, clean):
    from clusters.ceph.admin import is_clean

    assert is_clean(state) is clean


def test_a_ceph_conf_librados_cannot_parse_is_one_inventory_error(tmp_path):
    from clusters.ceph.admin import CephAdmin
    from clusters.exceptions import InventoryError

    conf = tmp_path / "ceph.conf"
    conf.write_bytes(b"this is [ not a conf\n\x00\x01")

    with pytest.raises(InventoryError, match=f"^cannot read {conf} \\(the Ceph client "
                                             "configuration\\): "):
        CephAdmin(str(conf))
