"""GET /openapi.json: the API's OpenAPI 3.1 document, written by hand in openapi.yaml."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Any

import yaml

from .blueprint import bp


@cache
def document() -> dict[str, Any]:
    return yaml.safe_load(files(__package__).joinpath("openapi.yaml").read_text())


@bp.get("/openapi.json")
def openapi():
    return document()
