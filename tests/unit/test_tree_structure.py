"""The shape of the whole tree: `clusters` at the bottom; `actions`, `probes`, `loadgen` and
`lab` above it and beside each other; `service` above them; `bench`, `migrations` and
`scripts` on top. An import through importlib with a literal name counts as an import.
(test_structure.py checks the layers inside service/.)"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# bottom to top; a package may import its own modules and those of a lower rank only
RANKS = {"clusters": 0, "actions": 1, "probes": 1, "loadgen": 1, "lab": 1, "service": 2,
         "bench": 3, "migrations": 3, "scripts": 3}


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


def imported_packages(source: str) -> list[str]:
    """The first-party top-level packages a module's source imports, however it imports."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append(node.module)
        elif isinstance(node, ast.Call) and (target := _dynamic_target(node)):
            found.append(target)
    return [name.split(".")[0] for name in found if name.split(".")[0] in RANKS]


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
