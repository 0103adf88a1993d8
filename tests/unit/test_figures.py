"""What a sampled cluster state counts as (service/results/figures.py)."""

from __future__ import annotations

import pytest

from service.results.figures import fault_seen


@pytest.mark.parametrize(("state", "seen"), [
    ({"fault_seen": True, "checks": []}, True),
    ({"fault_seen": False, "checks": ["OSD_SLOW_PING_TIME_FRONT"]}, True),
    ({"fault_seen": False, "checks": ["OSD_SLOW_PING_TIME_BACK", "POOL_NO_REDUNDANCY"]}, True),
    ({"fault_seen": False, "checks": ["SLOW_OPS"]}, True),
    ({"fault_seen": False, "checks": ["OSD_SCRUB_ERRORS", "PG_DAMAGED"]}, True),  # corruption
    ({"fault_seen": False, "checks": ["POOL_NO_REDUNDANCY"]}, False),
    ({"fault_seen": False}, False),  # a Swift sample: no checks
])
def test_a_slow_heartbeat_or_slow_ops_warning_is_ceph_reporting_a_slow_component(state, seen):
    assert fault_seen(state) is seen
