"""Issue 25, "Restores trust a record that the experiment supplies", played as a hostile
operator would: the catalogue's experiments uploaded through the JSON API with a restore told
what to undo (a unit to start, an OSD record to remove, a corruption to clean, a cgroup to go
back to, a hog's daemons, an image directory) are refused with a 400 naming the argument,
and nothing is stored. What only a run can refuse (replacing a healthy disk) is played on the
real Swift lab: the disk keeps its data."""

from __future__ import annotations

import copy
import json
import os
import uuid
from pathlib import Path

import pytest
from sqlalchemy import func, select

from actions import disk
from clusters.safety import fault_ledger
from service.store.models import UploadedExperiment

REPO = Path(__file__).resolve().parents[2]


def _experiment(name: str) -> dict:
    return json.loads((REPO / "experiments" / f"{name}.json").read_text())


def _with(name: str, step: str, **arguments) -> dict:
    """The catalogue's experiment `name` whose every `step` activity (method and rollbacks)
    is given `arguments` too."""
    document = copy.deepcopy(_experiment(name))
    for activity in document["method"] + document.get("rollbacks", []):
        if activity["name"] == step:
            activity["provider"]["arguments"] = {
                **(activity["provider"].get("arguments") or {}), **arguments}
    return document


def _uploads(sessions) -> int:
    with sessions() as session:
        return session.execute(select(func.count(UploadedExperiment.id))).scalar_one()


def _refusal(argument: str, provider: dict) -> str:
    # the allow-list names the function and the argument it does not take
    return (f"{provider['module']}.{provider['func']} takes no argument '{argument}'")


# (experiment, step, the "what" it is told, the argument named in the refusal)
EXPLOITS = [
    pytest.param("ceph-kill-osd", "start-osd", {"fault": {"unit": "poweroff.target"}},
                 "fault", id="start_osd-fault-poweroff"),
    pytest.param("ceph-kill-osd", "start-osd",
                 {"osd_id": -1, "fault": {"unit": "reboot.target", "supervisor": "systemd"}},
                 "fault", id="start_osd-every-osd-reboot"),
    pytest.param("swift-kill-object-server", "start-object-server",
                 {"fault": {"unit": "poweroff.target"}}, "fault", id="start_server-fault"),
    pytest.param("ceph-scale-out", "remove-osd",
                 {"added": {"osd_id": 0, "node": "node1", "mount": "/", "image": "/etc/passwd",
                            "pid_file": "/run/sshd.pid", "log": "/dev/null"}},
                 "added", id="remove_osd-added"),
    pytest.param("swift-corrupt-replica", "restore-corruption",
                 {"corruption": {"hash": "../../../../etc"}}, "corruption",
                 id="restore_corruption-hash"),
    pytest.param("swift-throttle-object-disk", "unthrottle-disk", {"back_to": "../.."},
                 "back_to", id="unthrottle_disk-back_to"),
    pytest.param("ceph-exhaust-memory", "stop-memory-hog", {"before": {"osd.1": 1}},
                 "before", id="stop_memory_hog-before"),
    pytest.param("swift-scale-out", "remove-device", {"image_dir": "/etc"}, "image_dir",
                 id="remove_device-image_dir"),
]


@pytest.mark.parametrize(("experiment", "step", "what", "argument"), EXPLOITS)
def test_an_upload_whose_restore_is_told_what_to_undo_is_refused_and_not_stored(
        api_as, sessions, experiment, step, what, argument):
    """The exploit: an operator uploads a catalogue experiment whose restore carries the
    record of what to undo (`systemctl start poweroff.target`, `rm -rf` of a hash with
    `../`, a purge of any OSD, a cgroup path with `..`); it answered 201 before."""
    operator = api_as("operator")
    name = f"hostile-{uuid.uuid4().hex[:8]}"
    document = _with(experiment, step, **what)
    before = _uploads(sessions)

    response = operator.post("/api/v1/experiments", json={"name": name,
                                                          "experiment": document})

    provider = next(a["provider"] for a in document["method"] if a["name"] == step)
    assert response.status_code == 400, response.json
    assert response.json["error"].startswith("the experiment may only run Faultline's own ")
    assert f"activity '{step}': {_refusal(argument, provider)}" in response.json["error"]
    assert _uploads(sessions) == before
    assert operator.get(f"/api/v1/experiments/{name}").status_code == 404


def test_the_catalogue_experiments_themselves_still_upload(api_as, sessions):
    """The refusals above are about the hostile argument, not the experiments."""
    operator = api_as("operator")
    for experiment in ("ceph-kill-osd", "swift-corrupt-replica", "ceph-scale-out",
                       "swift-throttle-object-disk", "swift-fail-disk"):
        name = f"stock-{uuid.uuid4().hex[:8]}"
        response = operator.post("/api/v1/experiments",
                                 json={"name": name, "experiment": _experiment(experiment)})
        assert response.status_code == 201, (experiment, response.json)
        assert operator.delete(f"/api/v1/experiments/{name}").status_code == 204


@pytest.fixture
def marked_disk(swift_cluster):
    """node2's Swift disk, with a marker file of this test on it (a format would lose it)."""
    target = next(d for d in swift_cluster.disks_on("node2") if d.swift_device)
    marker = Path(target.mount) / f".hostile-restore-{uuid.uuid4().hex[:8]}"
    marker.write_text("kept")
    yield target, marker
    marker.unlink(missing_ok=True)


@pytest.mark.lab
def test_restore_disk_replace_with_no_ledger_entry_formats_nothing(swift_cluster, file_ledger,
                                                                   marked_disk):
    """The exploit: `restore_disk(replace=true)` in an uploaded experiment ran mkfs on a
    healthy Swift disk, with no guard. With no failure of it in the ledger nothing is done."""
    target, marker = marked_disk

    result = disk.restore_disk(node="node2", replace=True,
                               configuration={"faultline_cluster": swift_cluster.name})

    assert (result["remounted"], result["replaced"], result["started"]) == (False, False, [])
    assert "nothing was unmounted, formatted or started" in result["note"]
    assert os.path.ismount(target.mount)
    assert marker.read_text() == "kept"


@pytest.mark.lab
def test_restore_disk_replace_of_a_healthy_disk_the_ledger_names_formats_nothing(
        swift_cluster, file_ledger, marked_disk):
    """The same exploit with a ledger entry for the disk (a fault restored by hand, or an
    entry left behind): a disk that is healthy keeps its data; the entry is struck off."""
    target, marker = marked_disk
    fault_ledger.record(swift_cluster.name, f"disk:node2:{target.mount}", "failed by hand",
                        "actions.disk.restore_disk", {"node": "node2", "device": target.mount},
                        {"device": target.device, "mount": target.mount})

    result = disk.restore_disk(node="node2", replace=True,
                               configuration={"faultline_cluster": swift_cluster.name})

    assert (result["remounted"], result["replaced"]) == (False, False)
    assert result["note"].endswith("was healthy: not replaced")
    assert os.path.ismount(target.mount)
    assert marker.read_text() == "kept"
    assert fault_ledger.outstanding(swift_cluster.name) == []
