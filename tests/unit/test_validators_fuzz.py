"""Property tests of what checks user input before anything starts: the workload and the
experiment document (an upload, a file, its actions' arguments).

Whatever JSON arrives, a validator either accepts it or raises its own error (an
InvalidInput or a WorkloadError) with one message; never a TypeError, KeyError or
AttributeError from deep inside, which the API would turn into a 500 and the CLI into a
traceback. And what is accepted is fit to run: a workload whose numbers are finite and in
range, an experiment whose workload parses and whose actions' arguments fit the cluster.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusters.access.inventory import load_cluster
from loadgen.exceptions import WorkloadError
from loadgen.workload import ALL_OPS, MAX_CAPACITY_SHARE, Workload, parse_workload
from service.exceptions import InvalidInput
from service.experiments import documents
from service.experiments.library import check_upload

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = sorted((REPO / "experiments").glob("*.json"))
WORKLOAD_KEYS = sorted(Workload.__dataclass_fields__)
# the lab's shape, on addresses nothing answers: only the static checks run here
INVENTORY = {"clusters": {
    "lab-ceph": {
        "kind": "ceph", "chaos": "allowed",
        "ssh": {"user": "root", "port": 2222, "key_file": "/keys/id"},
        "nodes": [{"name": f"node{i}", "address": f"127.0.0.{10 + i}", "zone": f"zone{z}"}
                  for i, z in ((1, 1), (2, 1), (3, 2), (4, 3))],
        "disks": [{"node": f"node{i + 1}", "device": f"/dev/loop{i}",
                   "mount": f"/var/lib/ceph/osd/ceph-{i}", "osd": i} for i in range(4)],
        "services": [{"name": f"osd.{i}", "kind": "osd", "node": f"node{i + 1}",
                      "pid_file": f"/run/ceph/osd.{i}.pid", "start": f"ceph-osd -i {i}"}
                     for i in range(4)] + [{"name": "mon.a", "kind": "mon", "node": "node1",
                                            "unit": "ceph-mon@a"}],
        "client": {"conf": "/etc/ceph/ceph.conf", "pool": "faultline"}},
    "lab-swift": {
        "kind": "swift", "chaos": "allowed",
        "ssh": {"user": "root", "port": 2222, "key_file": "/keys/id"},
        "nodes": [{"name": f"node{i}", "address": f"127.0.0.{20 + i}", "zone": f"zone{i}"}
                  for i in (1, 2, 3)],
        "disks": [{"node": f"node{i}", "device": f"/dev/loop{10 + i}",
                   "mount": f"/srv/node/d{i}", "swift_device": f"d{i}"} for i in (1, 2, 3)],
        "services": [{"name": f"object-server.node{i}", "kind": "object-server",
                      "node": f"node{i}", "unit": "swift-object-server"} for i in (1, 2, 3)],
        "client": {"auth_url": "http://127.0.0.1:1/auth/v1.0", "user": "test:tester",
                   "key_env": "FAULTLINE_FUZZ_SWIFT_KEY"}},
}}

scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20))
# what json.loads can give (Python's reads NaN and Infinity too)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                           max_leaves=20)
FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _one_message(exc: BaseException) -> None:
    assert isinstance(exc, InvalidInput | WorkloadError), repr(exc)
    assert str(exc).strip(), repr(exc)


# --- the workload ---

workload_values = st.dictionaries(st.sampled_from(WORKLOAD_KEYS) | st.text(max_size=8),
                                  json_values, max_size=8)


@FUZZ
@given(raw=json_values | workload_values)
def test_a_workload_is_accepted_fit_to_run_or_refused_with_its_own_error(raw):
    try:
        workload = parse_workload(raw)
    except WorkloadError as exc:
        _one_message(exc)
        assert str(exc).startswith("invalid workload: ")
        return
    _assert_fit_to_run(workload)


def _assert_fit_to_run(w: Workload) -> None:
    for name in ("ramp_s", "baseline_s", "duration_s"):
        value = getattr(w, name)
        assert value is None or (math.isfinite(value) and value >= 0), (name, value)
    if isinstance(w.rate, str):
        assert 0 < w.capacity_share <= MAX_CAPACITY_SHARE
    else:
        assert math.isfinite(w.rate) and w.rate > 0
    assert sum(w.mix.values()) == 100 and set(w.mix) <= set(ALL_OPS)
    assert all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
               for v in w.mix.values())
    low, high = w.size_range()
    assert 0 < low <= high


@FUZZ
@given(name=st.sampled_from(["rate", "ramp_s", "baseline_s", "duration_s"]),
       value=st.sampled_from([math.nan, math.inf, -math.inf]))
def test_not_a_number_and_infinity_are_refused(name, value):
    with pytest.raises(WorkloadError, match=f"{name} must be a finite number"):
        parse_workload({name: value})


# --- the experiment document ---

def _paths(value, prefix=()):
    """Every path into a JSON document (the root too)."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*prefix, index))


@st.composite
def mutated_experiments(draw):
    """One of the catalogue's experiments with one part replaced by any JSON, or removed:
    close enough to a real one to get past the first checks."""
    document = json.loads(draw(st.sampled_from(EXPERIMENTS)).read_text())
    path = draw(st.sampled_from(list(_paths(document))))
    if not path:
        return draw(json_values)
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(json_values)
    return document


@pytest.fixture(scope="module")
def inventory_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "inventory.yaml"
    path.write_text(yaml.safe_dump(INVENTORY))
    return path


@FUZZ
@given(document=mutated_experiments())
def test_an_upload_is_accepted_fit_to_run_or_refused_with_one_message(document, inventory_file):
    try:
        check_upload(copy.deepcopy(document))
    except (InvalidInput, WorkloadError) as exc:
        _one_message(exc)
        return
    # accepted: what the queue checks next before a run waits for its cluster
    _assert_fit_to_run(parse_workload(documents.faultline_control(document)["provider"]
                                      .get("arguments", {}).get("workload")))
    for cluster in INVENTORY["clusters"]:
        try:
            documents.check_static(copy.deepcopy(document), cluster, str(inventory_file))
        except (InvalidInput, WorkloadError) as exc:
            _one_message(exc)


@FUZZ
@given(document=mutated_experiments())
def test_an_experiment_file_is_loaded_and_checked_or_refused_with_one_message(
        document, tmp_path_factory, inventory_file):
    path = tmp_path_factory.mktemp("experiment") / "fuzzed.json"
    path.write_text(json.dumps(document))
    try:
        loaded = documents.load(path)
        cluster = documents.check_static(loaded, None, str(inventory_file))
    except (InvalidInput, WorkloadError) as exc:
        _one_message(exc)
        return
    assert cluster.name == "lab-ceph"


def test_the_inventory_of_these_tests_is_valid(inventory_file):
    assert {load_cluster(inventory_file, name).kind for name in INVENTORY["clusters"]} == {
        "ceph", "swift"}


@pytest.mark.parametrize(("document", "message"), [
    ({"title": "t", "description": "d", "method": None},
     "the experiment.method is not shaped as Chaos Toolkit expects: None is not of type "
     "'array'"),
    ({"title": "t", "description": "d", "method": [], "controls": [3]},
     "the experiment.controls[0] is not shaped as Chaos Toolkit expects: 3 is not of type "
     "'object'"),
    ({"title": "t", "description": "d", "method": [],
      "configuration": {"cluster": {"type": "env"}}},
     "the experiment.configuration.cluster is not shaped as Chaos Toolkit expects: 'key' is "
     "a required property"),
])
def test_a_misshapen_experiment_is_refused_where_chaoslib_would_crash(document, message):
    # each of these was a TypeError or AttributeError inside chaoslib before the shape check
    with pytest.raises(InvalidInput) as refused:
        check_upload(document)

    assert str(refused.value) == message


def test_a_workload_that_is_not_a_mapping_is_refused_with_its_own_error():
    with pytest.raises(WorkloadError, match=r"^invalid workload: it must be a mapping of "
                                            r"fields such as \{\"rate\": 50\}, not \[1, 2\]$"):
        parse_workload([1, 2])


@pytest.mark.parametrize(("after", "message"), [
    (math.nan, "nan is not a finite number"),
    (-5, "-5 is less than the minimum of 0"),
    (1e9, "1000000000.0 is greater than the maximum of 86400"),
])
def test_a_pause_that_chaoslib_cannot_sleep_or_that_would_hold_the_fault_for_ever_is_refused(
        after, message):
    document = json.loads((REPO / "experiments" / "ceph-cpu-hog.json").read_text())
    document["method"][0]["pauses"] = {"after": after}

    with pytest.raises(InvalidInput) as refused:
        check_upload(document)

    assert str(refused.value) == ("the experiment.method[0].pauses.after is not shaped as "
                                  f"Chaos Toolkit expects: {message}")
