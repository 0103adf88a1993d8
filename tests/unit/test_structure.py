"""The shape of service/: layered packages that import only downwards, no import cycle, no
import hidden in a function, no module named after a standard-library one, and one
exception root per package."""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from pathlib import Path

import pytest

SERVICE = Path(__file__).resolve().parents[2] / "service"

# bottom to top: a module may import its own package and those listed before it
LAYERS = ("exceptions", "store", "accounts", "results", "experiments", "jobs", "runs",
          "schedules", "monitoring", "worker", "web", "cli", "control", "__main__")

ROOTS = {  # each package's one exception root
    "store": "service.store.exceptions.StoreError",
    "accounts": "service.accounts.exceptions.AccountError",
    "results": "service.results.exceptions.ResultsError",
    "experiments": "service.experiments.exceptions.ExperimentsError",
    "jobs": "service.jobs.exceptions.JobsError",
    "runs": "service.runs.exceptions.RunsError",
    "schedules": "service.schedules.exceptions.SchedulesError",
    "monitoring": "service.monitoring.exceptions.MonitoringError",
    "web": "service.web.errors.WebError",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SERVICE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in SERVICE.rglob("*.py") if "node_modules" not in p.parts}


def _layer(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def _resolve(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if MODULES[importer].name != "__init__.py":
        base.pop()
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str) -> list[tuple[str, bool]]:
    """The service modules a module imports, each with whether the import is at module level."""
    tree = ast.parse(MODULES[module].read_text())
    top = set(map(id, tree.body))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source
                       for a in node.names]
        else:
            continue
        found += [(t, id(node) in top) for t in targets if t.split(".")[0] == "service"]
    return found


GRAPH = {m: sorted({t for t, _ in _imports(m)} - {m}) for m in MODULES}


def test_every_module_is_in_a_layer():
    assert {_layer(m) for m in MODULES if m != "service"} <= set(LAYERS)


def test_no_package_imports_one_above_it():
    upward = [f"{m} imports {t}" for m, targets in GRAPH.items() if m != "service"
              for t in targets if LAYERS.index(_layer(t)) > LAYERS.index(_layer(m))]
    assert not upward


def test_no_import_cycle():
    state: dict[str, str] = {}
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in GRAPH.get(module, ()):
            if state.get(target) == "open":
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    assert not cycles


def test_no_service_import_inside_a_function():
    hidden = [f"{m} imports {t} inside a function" for m in MODULES
              for t, at_top in _imports(m) if not at_top]
    assert not hidden


def test_no_module_is_named_after_a_standard_library_module():
    clashes = [m for m in MODULES if m.rsplit(".", 1)[-1] in sys.stdlib_module_names
               and not m.endswith("__main__")]
    assert not clashes


@pytest.mark.parametrize("package", sorted(ROOTS))
def test_every_error_of_a_package_is_under_its_one_root(package):
    root_module, _, root_name = ROOTS[package].rpartition(".")
    root = getattr(importlib.import_module(root_module), root_name)
    outside = []
    for module in (m for m in MODULES if _layer(m) == package):
        for name, obj in inspect.getmembers(importlib.import_module(module), inspect.isclass):
            if obj.__module__ == module and issubclass(obj, BaseException) \
                    and not issubclass(obj, root):
                outside.append(f"{module}.{name}")
    assert not outside


def test_the_control_keeps_its_public_path():
    control = importlib.import_module("service.control")
    for hook in ("before_experiment_control", "before_method_control",
                 "before_activity_control", "after_activity_control",
                 "after_experiment_control"):
        assert callable(getattr(control, hook))
