"""The dashboard's chart libraries: installed from npm by `make setup` into node_modules,
never committed; /vendor/ serves them and the downloadable reports inline them."""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "node_modules"
VENDOR_FILES = {
    "chart.umd.js": "chart.js/dist/chart.umd.js",
    "chartjs-plugin-annotation.min.js": "chartjs-plugin-annotation/dist/"
                                        "chartjs-plugin-annotation.min.js",
}
