"""The shape of the whole tree: `clusters` at the bottom; `actions`, `probes`, `loadgen` and
`lab` above it and beside each other; `service` above them; `bench`, `migrations` and
`scripts` on top. An import through importlib with a literal name counts as an import.
Inside `clusters`, the same rule over its layers (`CLUSTER_RANKS`, clusters/__init__.py says
what each holds). (test_structure.py checks the layers inside service/.)"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# bottom to top; a package may import its own modules and those of a lower rank only
RANKS = {"clusters": 0, "actions": 1, "probes": 1, "loadgen": 1, "lab": 1, "service": 2,
         "bench": 3, "migrations": 3, "scripts": 3}


# inside clusters/, bottom to top: its base (the modules of clusters/ itself: exceptions,
# paths, polling, processes), then its packages
CLUSTER_RANKS = {"base": 0, "access": 1, "ceph": 2, "swift": 2, "faults": 3, "discovery": 3,
                 "safety": 4}
BASE_MODULES = {"exceptions", "paths", "polling", "processes", "recovery_settings"}


def _files(package: str) -> list[Path]:
    return [p for p in (ROOT / package).rglob("*.py") if "node_modules" not in p.parts]


def _dynamic_target(node: ast.Call) -> str | None:
    """The literal module name of importlib.import_module("x") or __import__("x")."""
    func = node.func
    named = (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id in ("import_module", "__import__"))
    if named and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def imported_modules(source: str) -> list[str]:
    """The dotted names a module's source imports (absolute ones), however it imports; for
    `from package import name`, the name too (it may be a module of the package)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call) and (target := _dynamic_target(node)):
            found.append(target)
    return found


def imported_packages(source: str) -> list[str]:
    """The first-party top-level packages a module's source imports, however it imports."""
    tops = [name.split(".")[0] for name in imported_modules(source)]
    return list(dict.fromkeys(top for top in tops if top in RANKS))


def test_every_first_party_package_has_a_rank():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages - {"tests"} <= set(RANKS), packages - set(RANKS)


@pytest.mark.parametrize("package", sorted(RANKS))
def test_a_package_imports_only_lower_ranks(package):
    wrong = []
    for path in _files(package):
        for target in imported_packages(path.read_text()):
            if target != package and RANKS[target] >= RANKS[package]:
                wrong.append(f"{path.relative_to(ROOT)} imports {target}")
    assert not wrong


def test_an_import_through_importlib_is_seen():
    source = ("import importlib\n"
              "def f():\n"
              "    return importlib.import_module('service.store.db')\n"
              "g = __import__('lab.swift')\n")
    assert sorted(imported_packages(source)) == ["lab", "service"]


def _cluster_layer(path: Path) -> str:
    """The layer of a module of clusters/: its package's name, or its own for a base module."""
    parts = path.relative_to(ROOT / "clusters").parts
    return parts[0] if len(parts) > 1 else "base" if path.stem in BASE_MODULES else path.stem


def _imported_cluster_layers(source: str) -> list[str]:
    layers = [name.split(".")[1] for name in imported_modules(source)
              if name.startswith("clusters.")]
    return ["base" if layer in BASE_MODULES else layer for layer in layers]


def test_every_module_of_clusters_has_a_layer():
    layers = {_cluster_layer(p) for p in _files("clusters") if p.name != "__init__.py"
              or p.parent != ROOT / "clusters"}
    assert layers <= set(CLUSTER_RANKS), layers - set(CLUSTER_RANKS)


def test_clusters_layers_import_only_their_own_and_lower_ones():
    wrong = []
    for path in _files("clusters"):
        if path == ROOT / "clusters" / "__init__.py":
            continue
        layer = _cluster_layer(path)
        for target in _imported_cluster_layers(path.read_text()):
            if target != layer and CLUSTER_RANKS[target] >= CLUSTER_RANKS[layer]:
                wrong.append(f"{path.relative_to(ROOT)} ({layer}) imports clusters.{target}")
    assert not wrong


def test_clusters_imports_itself_by_absolute_names():
    # a relative import hides which layer it reaches into
    relative = [str(p.relative_to(ROOT)) for p in _files("clusters")
                if any(isinstance(n, ast.ImportFrom) and n.level
                       for n in ast.walk(ast.parse(p.read_text())))]
    assert not relative
