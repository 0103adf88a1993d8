"""The recovery settings' pure parts: Swift's files as Swift reads them, the merge across
daemons, and what a report and a comparison say of them."""

from clusters.recovery_settings import Setting, merge
from clusters.swift.recovery_settings import PROXY, REPLICATOR, conf_path, options_of, parse
from service.results.recovery_notes import recovery_lines, setting_differences, setting_notes

OBJECT_CONF = """
[DEFAULT]
devices = /srv/node
concurrency = 8

[app:object-server]
use = egg:swift#object

[object-replicator]
run_pause = 10
handoffs_first = Yes
"""


def _values(settings):
    return {s.name: (s.value, s.source) for s in settings}


def test_a_replicator_section_inherits_default_and_reads_old_names():
    got = _values(options_of(parse(OBJECT_CONF), "object-replicator", REPLICATOR, "n1:/c"))
    assert got == {"interval": ("10", "conf"), "concurrency": ("8", "conf"),
                   "handoffs_first": ("true", "conf"), "handoff_delete": ("auto", "default")}


def test_a_missing_section_has_swift_defaults_and_default_section_values():
    got = _values(options_of(parse("[DEFAULT]\nnode_timeout = 3\n"), "app:proxy-server",
                             PROXY, "proxy"))
    assert got == {"node_timeout": ("3", "conf"), "error_suppression_limit": ("10", "default"),
                   "error_suppression_interval": ("60", "default")}


def test_the_conf_file_is_the_first_conf_argument_after_the_program():
    assert conf_path(["/usr/bin/python3", "/usr/bin/swift-object-replicator",
                      "/etc/swift/object-server/1.conf", "-v"]) == \
        "/etc/swift/object-server/1.conf"
    assert conf_path(["swift-object-server", "/etc/swift/object-server.conf.d"]) == \
        "/etc/swift/object-server.conf.d"
    assert conf_path(["swift-object-server", "-v"]) is None


def test_merge_keeps_the_first_value_and_lists_the_places_that_differ():
    merged = merge([Setting("interval", "10", "30", "n1"), Setting("interval", "10", "30", "n2"),
                    Setting("interval", "30", "30", "n3"), Setting("concurrency", "1", "1", "n1")])
    assert [(s.name, s.value, s.differs) for s in merged] == [
        ("interval", "10", ["n3: 30"]), ("concurrency", "1", [])]


RECORD = {"system": "ceph", "release": "ceph version 18.2.7 (abc) reef (stable)",
          "settings": [
              {"name": "mon_osd_down_out_interval", "value": "30", "default": "600",
               "where": "mon.a", "source": "file", "timer": True, "differs": []},
              {"name": "osd_heartbeat_grace", "value": "40", "default": "20",
               "where": "osd.0", "source": "mon", "timer": True, "differs": []},
              {"name": "osd_max_backfills", "value": "3", "default": "1", "where": "osd.0",
               "source": "mon", "timer": False, "differs": ["osd.2: 1"]},
              {"name": "osd_op_queue", "value": "mclock_scheduler",
               "default": "mclock_scheduler", "where": "osd.0", "source": "default",
               "timer": False, "differs": []},
              {"name": "pool rbd size", "value": "3", "default": None, "where": "pool rbd",
               "source": "pool", "timer": False, "differs": []}],
          "errors": ["osd.3: timed out"]}


def test_notes_say_how_much_a_timer_is_shortened_and_what_is_not_the_default():
    assert setting_notes(RECORD) == [
        "mon_osd_down_out_interval is 30 s, 20x shorter than Ceph 18.2.7's default 600 s",
        "osd_heartbeat_grace is 40 s, 2x longer than Ceph 18.2.7's default 20 s",
        "osd_max_backfills is 3, not Ceph 18.2.7's default 1 (differs: osd.2: 1)",
        "not read: osd.3: timed out"]
    assert setting_notes(None) == []


def test_the_text_report_lists_every_setting_then_the_notes():
    lines = recovery_lines(RECORD, setting_notes(RECORD))
    assert lines[1] == "  recovery settings (Ceph 18.2.7, read before the fault):"
    assert len([line for line in lines if line.startswith("    ")]) == 5
    assert lines[-1] == "  recovery: not read: osd.3: timed out"


def test_a_comparison_names_settings_that_runs_of_one_kind_ran_with_differently():
    other = {**RECORD, "settings": [{**s, "value": "600"} if s["name"].startswith("mon_")
                                    else s for s in RECORD["settings"]]}
    swift = {"system": "swift", "release": "swift 2.30.0", "errors": [], "settings": [
        {"name": "interval", "value": "10", "default": "30", "where": "n1", "source": "conf",
         "timer": True, "differs": []}]}
    entries = [{"run_id": 1, "cluster_kind": "ceph", "recovery_settings": RECORD},
               {"run_id": 2, "cluster_kind": "ceph", "recovery_settings": other},
               {"run_id": 3, "cluster_kind": "swift", "recovery_settings": swift},
               {"run_id": 4, "cluster_kind": "ceph", "recovery_settings": None}]
    assert setting_differences(entries, lambda e: f"run {e['run_id']}") == [
        "The ceph runs ran with different mon_osd_down_out_interval (run 1: 30, run 2: 600): "
        "their recovery times are not measured under the same settings."]
