"""The recovery settings a run may change: only those of the list, with values the running
release takes (its `config help` decides, as these options read on Reef 18.2.7)."""

import re

import pytest
from chaoslib.exceptions import ActivityFailed

from actions.recovery_tuning import check_arguments
from clusters.access.inventory import parse_inventory
from clusters.ceph.config_changes import normalised, static_problems
from clusters.exceptions import ClusterError

PROFILE = {"name": "osd_mclock_profile", "type": "str", "min": "", "max": "",
           "enum_values": ["balanced", "high_recovery_ops", "high_client_ops", "custom"]}
BACKFILLS = {"name": "osd_max_backfills", "type": "uint", "min": "", "max": ""}
OVERRIDE = {"name": "osd_mclock_override_recovery_settings", "type": "bool"}
NODE = [{"name": "node1", "address": "192.0.2.1"}]
CLUSTERS = parse_inventory({"clusters": {
    "ceph": {"kind": "ceph", "nodes": NODE, "client": {"conf": "/etc/ceph/ceph.conf"}},
    "swift": {"kind": "swift", "nodes": NODE}}})


def test_values_are_taken_as_the_release_types_them():
    assert normalised(PROFILE, "high_recovery_ops") == "high_recovery_ops"
    assert normalised(BACKFILLS, 4) == "4"
    assert normalised(OVERRIDE, True) == "true"


@pytest.mark.parametrize(("option", "value", "says"), [
    (PROFILE, "fastest", "is not one of this release's values: balanced, high_recovery_ops"),
    (BACKFILLS, "many", "must be a whole number"),
    (BACKFILLS, -1, "must not be negative"),
    ({**BACKFILLS, "max": "16"}, 64, "out of its range (max 16)"),
    (OVERRIDE, "perhaps", "must be true or false"),
])
def test_a_value_the_release_refuses_is_refused(option, value, says):
    with pytest.raises(ClusterError, match=re.escape(says)):
        normalised(option, value)


def test_only_the_listed_settings_and_plain_values_are_taken():
    assert static_problems({"osd_mclock_profile": "balanced"}) == []
    assert static_problems({}) and static_problems(None)
    (problem,) = static_problems({"mon_osd_down_out_interval": 600})
    assert problem.startswith("'mon_osd_down_out_interval' is not a setting a run changes")
    (problem,) = static_problems({"osd_max_backfills": ["4"]})
    assert "must be a string, a number or a boolean" in problem


def test_the_action_takes_a_ceph_cluster_only():
    check_arguments("set_ceph_recovery", {"settings": {"osd_max_backfills": 2}},
                    CLUSTERS["ceph"])
    with pytest.raises(ActivityFailed, match="swift is a swift cluster"):
        check_arguments("set_ceph_recovery", {"settings": {"osd_max_backfills": 2}},
                        CLUSTERS["swift"])
    with pytest.raises(ActivityFailed, match="not a setting a run changes"):
        check_arguments("set_ceph_recovery", {"settings": {"osd_op_queue": "wpq"}},
                        CLUSTERS["ceph"])
