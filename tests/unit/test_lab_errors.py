"""Every error the lab raises has one root, so the CLI says each in one `error:` line."""

from __future__ import annotations

import inspect

import pytest
from click.testing import CliRunner

import lab
import lab.exceptions
from lab.exceptions import LabError
from service.cli import main


def _lab_modules():
    import importlib
    import pkgutil
    for info in pkgutil.iter_modules(lab.__path__):
        yield importlib.import_module(f"lab.{info.name}")


def test_every_exception_class_defined_in_lab_is_a_lab_error():
    found = {}
    for module in _lab_modules():
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.startswith("lab."):
                found[f"{obj.__module__}.{name}"] = obj
    assert "lab.exceptions.RootfsError" in found and "lab.exceptions.NodeError" in found
    strays = [name for name, cls in found.items() if not issubclass(cls, lab.exceptions.LabError)]
    assert strays == []


@pytest.mark.parametrize("error", ["NodeError", "RootfsError", "DaemonError", "DiskError"])
def test_a_failed_reef_lab_up_is_one_error_line(monkeypatch, error):
    import lab.ceph_reef

    def broken(*args, **kwargs):
        raise getattr(lab.exceptions, error)("the node container lab-ceph-reef-1 did not boot")

    monkeypatch.setattr(lab.ceph_reef, "up", broken)
    result = CliRunner().invoke(main, ["lab", "up", "ceph", "--release", "reef"])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == "error: the node container lab-ceph-reef-1 did not boot"
    assert "Traceback" not in result.output


def _state(health: str, checks: tuple[str, ...], clean: int = 89):
    from clusters.ceph.admin import CephState
    return CephState(health=health, checks=checks, num_osds=4, num_up_osds=4, num_in_osds=4,
                     num_pgs=89, pgs_by_state={"active+clean": clean,
                                               "active+recovering": 89 - clean},
                     degraded_objects=0, misplaced_objects=0)


def test_a_lab_too_full_to_be_healthy_is_said_at_once_not_waited_on():
    from lab import ceph_setup
    with pytest.raises(LabError, match=r"too full.*OSD_NEARFULL, POOL_NEARFULL.*--purge"):
        ceph_setup._settled(_state("HEALTH_WARN", ("POOL_NEARFULL", "OSD_NEARFULL")))


def test_a_full_lab_still_recovering_and_a_healthy_one_are_waited_on_as_before():
    from lab import ceph_setup
    assert not ceph_setup._settled(_state("HEALTH_WARN", ("OSD_NEARFULL",), clean=80))
    assert ceph_setup._settled(_state("HEALTH_OK", ()))
