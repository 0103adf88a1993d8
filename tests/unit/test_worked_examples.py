"""The worked-examples runner's pure parts: the list it runs and the zone it rewrites."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("worked_examples",
                                               REPO / "scripts" / "worked_examples.py")
examples = importlib.util.module_from_spec(_spec)
sys.modules["worked_examples"] = examples  # dataclasses look their module up there
_spec.loader.exec_module(examples)


def test_every_example_names_an_experiment_of_the_catalogue_once():
    names = [e.name for e in examples.EXAMPLES]
    assert len(names) == len(set(names))
    for example in examples.EXAMPLES:
        assert (REPO / example.experiment).is_file(), example.experiment
        assert example.cluster in {"lab-ceph", "lab-swift", "lab-ceph-reef"}


def test_the_zone_is_set_in_the_method_and_the_rollbacks_alike():
    document = json.loads((REPO / "experiments" / "ceph-power-off-zone.json").read_text())
    changed = examples.with_zone(document, "zone2")
    zones = [a["provider"]["arguments"]["zone"]
             for a in [*changed["method"], *changed["rollbacks"]]
             if "zone" in a.get("provider", {}).get("arguments", {})]
    assert len(zones) == 3 and set(zones) == {"zone2"}


def test_an_unknown_example_is_one_error_and_runs_nothing(capsys, monkeypatch):
    monkeypatch.setattr(examples, "run_example", lambda *a: pytest.fail("ran"))
    assert examples.main(["--only", "ceph-hang-osd,no-such-thing"]) == 2
    assert capsys.readouterr().err.strip() == \
        "error: no such example: no-such-thing (see --list)"


def test_each_example_starts_its_own_lab():
    labs = {e.cluster: e.lab for e in examples.EXAMPLES}
    assert labs == {"lab-ceph": ["ceph"], "lab-swift": ["swift"],
                    "lab-ceph-reef": ["ceph", "--release", "reef"]}
