"""Every experiment file is a valid Chaos Toolkit experiment with a valid Faultline workload."""

from pathlib import Path

import pytest

from loadgen.workload import parse_workload
from service.experiments import documents

FILES = sorted((Path(__file__).resolve().parents[2] / "experiments").glob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_experiment_file_is_valid(path):
    experiment = documents.load(path)
    control = documents.faultline_control(experiment)
    assert control is not None, f"{path.name} declares no Faultline control"
    parse_workload(control["provider"]["arguments"]["workload"])
    names = {a["name"] for a in experiment["method"] + experiment.get("rollbacks", [])}
    assert control["provider"]["arguments"]["fault"] in names
    assert control["provider"]["arguments"]["restore"] in names


def test_there_is_at_least_one_experiment():
    assert any(p.name == "ceph-kill-osd.json" for p in FILES)
