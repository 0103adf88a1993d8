"""The Swift replicator settings a run changes (clusters/swift/replicator_changes.py): the
file edit keeps everything else of the operator's file, and gives back what was there, so
that the restore writes exactly that; bad values are refused before anything is touched."""

from __future__ import annotations

import pytest

from clusters.exceptions import ClusterError
from clusters.swift.replicator_changes import edit, normalised, static_problems

CONF = """\
[DEFAULT]
devices = /srv/node
# concurrency = 9 (a comment, not a setting)

[object-replicator]
rsync_module = rsync://{replication_ip}:873/object
concurrency = 4
interval = 10

[object-auditor]
concurrency = 2
"""


def test_a_setting_of_the_section_is_replaced_and_put_back_exactly():
    changed, before = edit(CONF, {"concurrency": "1", "handoffs_first": "true"})
    assert before == {"concurrency": "4", "handoffs_first": None}
    section = changed.split("[object-replicator]\n")[1].split("[object-auditor]")[0]
    assert section.splitlines() == ["handoffs_first = true",
                                    "rsync_module = rsync://{replication_ip}:873/object",
                                    "concurrency = 1", "interval = 10", ""]
    assert "[object-auditor]\nconcurrency = 2\n" in changed  # other sections untouched
    assert "# concurrency = 9 (a comment, not a setting)" in changed
    restored, now = edit(changed, before)
    assert now == {"concurrency": "1", "handoffs_first": "true"}
    assert restored == CONF


def test_a_file_without_the_section_gets_one_and_loses_it_on_the_way_back_to_nothing():
    text = "[DEFAULT]\nbind_port = 6200\n"
    changed, before = edit(text, {"handoffs_first": "true"})
    assert before == {"handoffs_first": None}
    assert changed == text + "\n[object-replicator]\nhandoffs_first = true\n"
    restored, _ = edit(changed, before)
    assert restored == text + "\n[object-replicator]\n"
    assert edit(text, {"handoffs_first": None}) == (text, {"handoffs_first": None})


@pytest.mark.parametrize(("settings", "problem"), [
    ({"concurrency": 0}, "concurrency must be a whole number in [1, 64], not 0"),
    ({"concurrency": "4; rm -rf /"}, "concurrency must be a whole number in [1, 64], "
                                     "not '4; rm -rf /'"),
    ({"concurrency": True}, "concurrency must be a whole number in [1, 64], not True"),
    ({"handoffs_first": "maybe"}, "handoffs_first must be true or false, not 'maybe'"),
    ({"interval": 5}, "'interval' is not a replicator setting a run changes (it takes "
                      "concurrency, handoffs_first)"),
    ({}, "settings must be a non-empty mapping of concurrency, handoffs_first to values"),
])
def test_bad_settings_are_refused(settings, problem):
    assert static_problems(settings) == [problem]


def test_values_are_written_as_swift_reads_them():
    assert normalised("concurrency", "08") == "8"
    assert normalised("handoffs_first", True) == "true"
    assert normalised("handoffs_first", "No") == "false"
    with pytest.raises(ClusterError):
        normalised("handoffs_first", 1.5)
