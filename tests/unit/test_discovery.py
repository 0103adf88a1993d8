"""Chaos Toolkit discovers Faultline's actions and probes from the installed distribution."""

from chaoslib.discovery.discover import discover


def test_discovery_lists_the_ceph_actions_and_probes():
    found = {(a["type"], a["mod"], a["name"])
             for a in discover("faultline", download_and_install=False)["activities"]}
    assert {("action", "actions.ceph", "kill_osd"), ("action", "actions.ceph", "start_osd"),
            ("probe", "probes.ceph", "health_ok"),
            ("probe", "probes.ceph", "wait_for_health_ok"),
            ("probe", "probes.ceph", "degraded_objects")} <= found
