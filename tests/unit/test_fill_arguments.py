"""The fill's arguments (actions/fill.py): a usage target or a fixed count of objects, never
both, each in its range; what the run's scope says it does."""

from __future__ import annotations

import pytest
from chaoslib.exceptions import ActivityFailed

from actions import fill
from clusters.access.inventory import parse_inventory

CLUSTER = parse_inventory({"clusters": {"c": {
    "kind": "ceph", "nodes": [{"name": "n1", "address": "127.0.0.1"}],
    "client": {"conf": "/etc/ceph/ceph.conf", "pool": "p"}}}})["c"]


@pytest.mark.parametrize(("arguments", "message"), [
    ({"target": 0.5, "objects": 10}, "give the fill a target or a number of objects, not both"),
    ({"objects": 0}, "fill objects must be a whole number in [1, 1000000], not 0"),
    ({"objects": 2.5}, "fill objects must be a whole number in [1, 1000000], not 2.5"),
    ({"objects": True}, "fill objects must be a whole number in [1, 1000000], not True"),
    ({"objects": 10**7}, "fill objects must be a whole number in [1, 1000000], not 10000000"),
    ({"target": 0.95}, "fill target must be a fraction in (0, 0.9], not 0.95"),
    ({"target": "half"}, "fill target must be a fraction in (0, 0.9], not 'half'"),
    ({"objects": 10, "object_mib": 0}, "object_mib must be in (0, 64], not 0"),
])
def test_bad_fill_arguments_are_refused_with_one_line(arguments, message):
    with pytest.raises(ActivityFailed) as refused:
        fill.check_arguments("fill_cluster", arguments, CLUSTER)
    assert str(refused.value) == message


def test_a_count_or_a_target_is_what_the_scope_says():
    assert fill._fill_scope(CLUSTER, {"objects": 8000, "object_mib": 0.015625}).says == (
        "writes 8000 fill objects of 0.015625 MiB in the pool's namespace faultline-fill")
    assert fill._fill_scope(CLUSTER, {"target": 0.5}).says == (
        "fills the cluster to 50% raw usage with 4 MiB objects in the pool's namespace "
        "faultline-fill")
    fill.check_arguments("fill_cluster", {"objects": 8000, "target": None}, CLUSTER)
