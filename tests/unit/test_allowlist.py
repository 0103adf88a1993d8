"""The one allow-list of what an experiment may run (service.experiments.allowlist): every
problem of a document named, exactly; the stock experiment files pass; guard overrides
need an admin."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from service.experiments import allowlist
from service.experiments.exceptions import (
    ExperimentError,
    GuardOverrideRefused,
    PreflightError,
)
from service.experiments.preflight import check_run

REPO = Path(__file__).resolve().parents[2]
FILES = sorted((REPO / "experiments").glob("*.json"))
KILL_OSD = json.loads((REPO / "experiments" / "ceph-kill-osd.json").read_text())
CONTROL = KILL_OSD["controls"][0]


def _activity(module: str, func: str, name: str = "x", kind: str = "python",
              **arguments) -> dict:
    provider = {"type": kind, "module": module, "func": func}
    if arguments:
        provider["arguments"] = arguments
    return {"type": "action", "name": name, "provider": provider}


def _with(path: str, value) -> dict:
    """KILL_OSD with `value` at a dotted path ("method.0.controls"); appended to a list
    when the path names one."""
    document = copy.deepcopy(KILL_OSD)
    *parents, last = path.split(".")
    here = document
    for key in parents:
        here = here[int(key)] if key.isdigit() else here.setdefault(key, {})
    if isinstance(here.get(last) if isinstance(here, dict) else None, list):
        here[last].append(value)
    else:
        here[last] = value
    return document


FOREIGN_CONTROL = {"name": "spy", "provider": {"type": "python", "module": "os"}}

PROBLEMS = [
    (_with("method", _activity("os", "system", command="touch /tmp/x")),
     "activity 'x' calls os.system, which is not one of Faultline's actions or probes"),
    (_with("method", _activity("actions.__init__", "discover")),
     "activity 'x' calls actions.__init__.discover, which is not one of Faultline's actions "
     "or probes"),
    (_with("method", _activity("actions", "discover")),
     "activity 'x' calls actions.discover, which is not one of Faultline's actions or probes"),
    # a name the module imports, not one of its __all__
    (_with("method", _activity("actions.swift", "answers_healthcheck", address="10.0.0.9",
                               port=22)),
     "activity 'x' calls actions.swift.answers_healthcheck, which is not one of Faultline's "
     "actions or probes"),
    (_with("method", {"type": "action", "name": "sh", "provider": {
        "type": "process", "path": "touch", "arguments": "/tmp/x"}}),
     "activity 'sh' runs a process provider: only python functions of Faultline's actions "
     "and probes may run"),
    (_with("rollbacks", {"type": "action", "name": "get", "provider": {
        "type": "http", "url": "http://10.0.0.9:22/"}}),
     "activity 'get' runs a http provider: only python functions of Faultline's actions and "
     "probes may run"),
    (_with("method", _activity("actions.ceph", "kill_osd", osd_id=1, signal=9)),
     "activity 'x': actions.ceph.kill_osd takes no argument 'signal'"),
    (_with("method", _activity("actions.ceph", "kill_osd", configuration={})),
     "activity 'x': actions.ceph.kill_osd takes no argument 'configuration'"),
    (_with("steady-state-hypothesis.probes.0.tolerance", {
        "type": "probe", "name": "t", "provider": {"type": "process", "path": "id"}}),
     "activity 'cluster-is-healthy (its tolerance)' runs a process provider: only python "
     "functions of Faultline's actions and probes may run"),
    (_with("controls", FOREIGN_CONTROL),
     "control 'spy' at the experiment level is module os: the only control allowed is "
     "service.control"),
    (_with("steady-state-hypothesis.controls", [FOREIGN_CONTROL]),
     "control 'spy' at the hypothesis level is module os: the only control allowed is "
     "service.control"),
    (_with("method.0.controls", [FOREIGN_CONTROL]),
     "control 'spy' of activity 'kill-osd' is module os: the only control allowed is "
     "service.control"),
    (_with("method.0.controls", [{"name": "sh", "provider": {"type": "process",
                                                           "path": "id"}}]),
     "control 'sh' of activity 'kill-osd' is a process provider: the only control allowed "
     "is service.control"),
    (_with("controls.0.provider.arguments.dump_env", True),
     "control 'faultline' at the experiment level: service.control takes no argument "
     "'dump_env'"),
    (_with("controls.0.provider.arguments.run_id", 7),
     "control 'faultline' at the experiment level: 'run_id' is the service's to set, not the "
     "experiment's"),
    (_with("secrets", {"db": {"url": {"type": "env", "key": "DATABASE_URL"}}}),
     "a secrets block at the experiment.secrets: an experiment holds no secrets"),
    (_with("method.0.provider.secrets", ["db"]),
     "a secrets block at the experiment.method[0].provider.secrets: an experiment holds no "
     "secrets"),
    (_with("configuration.faultline_cluster", "production"),
     "configuration 'faultline_cluster' must be read from the environment "
     '({"type": "env", "key": "FAULTLINE_CLUSTER"}), not a literal value'),
    (_with("configuration.faultline_inventory", "/etc/faultline/other.yaml"),
     "configuration 'faultline_inventory' must be read from the environment "
     '({"type": "env", "key": "FAULTLINE_INVENTORY"}), not a literal value'),
    (_with("configuration.faultline_cluster", {"type": "env", "key": "DATABASE_URL"}),
     "configuration 'faultline_cluster' must read the environment variable FAULTLINE_CLUSTER, "
     "not 'DATABASE_URL'"),
    (_with("configuration.url", {"type": "env", "key": "DATABASE_URL"}),
     "configuration 'url' is not one of faultline_cluster, faultline_inventory"),
    (_with("configuration.faultline_cluster", {
        "type": "probe", "name": "p", "provider": {"type": "process", "path": "env"}}),
     "configuration 'faultline_cluster' must be of type env, not 'probe'"),
    (_with("configuration.faultline_cluster", {"type": "env", "key": "FAULTLINE_CLUSTER",
                                               "env_var_type": "json"}),
     "configuration 'faultline_cluster' may only have type, key and default, not "
     "env_var_type"),
    # a scope would skip one of the control's hooks: faults with no run, or a run never ended
    (_with("controls.0.scope", "after"),
     "control 'faultline' at the experiment level may only have name and provider, not scope"),
    (_with("controls", {**CONTROL, "name": "second"}),
     "2 service.control controls at the experiment level: one records a run"),
]


@pytest.mark.parametrize(("document", "message"), PROBLEMS)
def test_the_allow_list_names_each_problem_exactly(document, message):
    assert allowlist.problems(document) == [message]


def test_every_problem_is_named_at_once_in_one_error():
    document = _with("method", _activity("os", "system"))
    document["secrets"] = {"s": {"k": "v"}}

    with pytest.raises(ExperimentError) as refused:
        allowlist.check(document)

    assert str(refused.value) == (
        "the experiment may only run Faultline's own actions, probes and control: a secrets "
        "block at the experiment.secrets: an experiment holds no secrets; activity 'x' calls "
        "os.system, which is not one of Faultline's actions or probes")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_stock_experiment_file_passes_the_allow_list(path):
    document = json.loads(path.read_text())

    assert allowlist.problems(document) == []
    assert allowlist.guard_overrides(document) == []


def test_the_allow_list_is_what_chaos_discovery_reports_and_nothing_else():
    pairs = set(allowlist.activities())

    assert ("actions.ceph", "kill_osd") in pairs and ("probes.swift", "dispersion") in pairs
    assert all(module.startswith(("actions.", "probes.")) for module, _ in pairs)
    assert ("actions.swift", "answers_healthcheck") not in pairs
    assert ("actions.safety", "check_blast_radius") not in pairs


def test_the_control_arguments_are_those_the_control_reads():
    read = set()
    for source in ("service/runs/control.py", "service/runs/hooks.py",
                   "service/experiments/plan.py"):
        read |= set(re.findall(r'arguments\.get\("(\w+)"',
                               (REPO / source).read_text()))
    assert read - {"allow_unavailable"} == (allowlist.CONTROL_ARGUMENTS
                                            | allowlist.SERVICE_ARGUMENTS)


@pytest.mark.parametrize(("document", "named"), [
    (_with("method.0.provider.arguments.allow_unavailable", True),
     "allow_unavailable (activity 'kill-osd')"),
    (_with("method.0.provider.arguments.allow_unavailable", "false"),
     "allow_unavailable (activity 'kill-osd')"),
    (_with("controls.0.provider.arguments.baseline", {"on_invalid": "inject-anyway"}),
     "baseline.on_invalid inject-anyway (control 'faultline')"),
])
def test_a_guard_override_from_an_operator_is_refused_naming_it(document, named):
    with pytest.raises(GuardOverrideRefused) as refused:
        allowlist.check_guard_overrides(document, "olive", "operator")

    assert str(refused.value) == (f"{named} overrides the guard that keeps data available: "
                                  "that needs the admin role; olive is an operator")


def test_a_guard_override_from_a_schedule_is_refused():
    document = _with("method.0.provider.arguments.allow_unavailable", True)

    with pytest.raises(GuardOverrideRefused, match=r"needs the admin role; schedule nightly "
                                                   r"is not an admin$"):
        allowlist.check_guard_overrides(document, "schedule nightly", None)


def test_a_guard_override_from_an_admin_is_allowed_and_names_the_admin():
    document = _with("method.0.provider.arguments.allow_unavailable", True)

    assert allowlist.check_guard_overrides(document, "ada", "admin") == "ada"
    assert allowlist.check_guard_overrides(KILL_OSD, "olive", "operator") is None


def test_a_stored_guard_override_that_no_admin_allowed_is_refused():
    document = _with("method.0.provider.arguments.allow_unavailable", True)

    with pytest.raises(ExperimentError, match=r"^allow_unavailable \(activity 'kill-osd'\) "
                                              r"overrides the guard, and no admin allowed "
                                              r"it when the run was queued$"):
        allowlist.check_stored(document, None)
    allowlist.check_stored(document, "ada")


def test_the_run_id_and_path_the_service_sets_pass_only_as_the_service_runs_it():
    document = _with("controls.0.provider.arguments.run_id", 7)
    document["controls"][0]["provider"]["arguments"]["experiment_path"] = "/x.json"

    allowlist.check(document, as_run=True)
    with pytest.raises(ExperimentError, match="'run_id' is the service's to set"):
        allowlist.check(document)


def test_preflight_holds_a_command_line_run_to_the_allow_list():
    # `faultline run` and `chaos run` reach the control, whose preflight checks it first
    with pytest.raises(PreflightError, match=r"^the experiment may only run Faultline's own "
                                             r"actions, probes and control: activity 'x' "
                                             r"calls os.system, "):
        check_run(_with("method", _activity("os", "system")), None, {})
