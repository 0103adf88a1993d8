"""Chaos Toolkit discovers Faultline's actions and probes from the installed distribution."""

from chaoslib.discovery.discover import discover


def test_discovery_lists_the_ceph_actions_and_probes():
    found = {(a["type"], a["mod"], a["name"])
             for a in discover("faultline", download_and_install=False)["activities"]}
    assert {("action", "actions.ceph", "kill_osd"), ("action", "actions.ceph", "start_osd"),
            ("probe", "probes.ceph", "health_ok"),
            ("probe", "probes.ceph", "wait_for_health_ok"),
            ("probe", "probes.ceph", "degraded_objects")} <= found


def test_every_actions_module_with_an_all_is_discovered():
    import ast
    from pathlib import Path

    import actions

    exporting = {f"actions.{path.stem}" for path in Path(actions.__file__).parent.glob("*.py")
                 if any(isinstance(node, ast.Assign) and any(
                     getattr(t, "id", None) == "__all__" for t in node.targets)
                        for node in ast.parse(path.read_text()).body)}
    assert "actions.memory" in exporting
    assert exporting <= set(actions.ACTION_MODULES)
