"""Reading a request: its JSON body, checked field by field, and its query parameters.

Every problem is a BadRequest (or UnsupportedMedia) naming the field and what it must be,
so a client learns exactly what to fix and nothing is changed.
"""

from __future__ import annotations

import json
from typing import Any

from flask import request

from service.store.models import PG_INT_MAX

from .errors import BadRequest, UnsupportedMedia

TYPE_NAMES = {str: "a string", int: "a whole number", bool: "true or false",
              dict: "a JSON object", list: "a list"}


MAX_JSON_DEPTH = 64  # an experiment nests about 8 deep; the parser itself gives up near 1,000


def json_body() -> dict[str, Any]:
    """The body as a JSON object; 415 if it is not sent as JSON, 400 if it is not one or is
    nested deeper than MAX_JSON_DEPTH (its size is Flask's MAX_CONTENT_LENGTH: 413)."""
    if not request.is_json:
        raise UnsupportedMedia("send a JSON object with 'Content-Type: application/json'")
    try:
        body = json.loads(request.get_data(as_text=True) or "null")
    except ValueError as exc:
        raise BadRequest(f"the body is not valid JSON: {exc}") from None
    except RecursionError:
        raise BadRequest(DEPTH_MESSAGE) from None
    if depth_of(body) > MAX_JSON_DEPTH:
        raise BadRequest(DEPTH_MESSAGE)
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    if _holds_nul(body):
        raise BadRequest(NUL_MESSAGE)
    return body


DEPTH_MESSAGE = f"the body is nested deeper than {MAX_JSON_DEPTH} levels"


def depth_of(value: Any) -> int:
    """How deep objects and lists nest in a parsed JSON value (a scalar: 0), without
    recursion, so no depth makes it fail."""
    deepest, level = 0, [value]
    while level:  # one level of containers at a time
        level = [v for v in level if isinstance(v, dict | list)]
        if level:
            deepest += 1
        level = [c for v in level for c in (v.values() if isinstance(v, dict) else v)]
    return deepest


NUL_MESSAGE = "text must not contain NUL characters (PostgreSQL cannot store them)"


def refuse_nul() -> None:
    """Before any view: a NUL in the path or a query parameter is refused, as in a body."""
    if "\x00" in request.path or any("\x00" in k or "\x00" in v
                                      for k, v in request.args.items(multi=True)):
        raise BadRequest(NUL_MESSAGE)


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_nul(v) for v in value)
    return False


def fields(body: dict[str, Any], required: dict[str, type] | None = None,
           optional: dict[str, type] | None = None) -> dict[str, Any]:
    """The body's fields, each of its type (None allowed for an optional one); a field that
    is unknown, missing or of another type is a BadRequest."""
    required, optional = required or {}, optional or {}
    known = {**required, **optional}
    unknown = sorted(set(body) - set(known))
    if unknown:
        raise BadRequest(f"unknown field '{unknown[0]}' (known: {', '.join(sorted(known))})")
    for name in required:
        if body.get(name) is None:
            raise BadRequest(f"field '{name}' is required")
    for name, kind in known.items():
        value = body.get(name)
        if value is None and name in optional:
            continue
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise BadRequest(f"field '{name}' must be {TYPE_NAMES[kind]}, not {_short(value)}")
        if kind is str and not value.strip():
            raise BadRequest(f"field '{name}' must not be empty")
    return {name: body[name] for name in known if name in body}


def string_list(name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise BadRequest(f"field '{name}' must be a list of names, not {_short(value)}")
    return value


def check_query(known: tuple[str, ...]) -> None:
    """A misspelt query parameter would silently widen a list: refuse it."""
    unknown = sorted(set(request.args) - set(known))
    if unknown:
        raise BadRequest(f"unknown query parameter '{unknown[0]}' "
                         f"(known: {', '.join(sorted(known)) or 'none'})")


def query_int(name: str, default: int | None = None, minimum: int = 0) -> int | None:
    """A whole-number query parameter (default if absent), from `minimum` to PostgreSQL's
    largest integer, as the OpenAPI document bounds it."""
    raw = request.args.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be a whole number, not {raw[:60]!r}") from None
    if not minimum <= value <= PG_INT_MAX:
        raise BadRequest(f"{name} must be from {minimum} to {PG_INT_MAX}, not {raw[:60]!r}")
    return value


def query_str(name: str) -> str | None:
    """A text query parameter, or None if absent; a blank one is refused, as the document
    says (a filter left empty by mistake would otherwise silently match everything)."""
    value = request.args.get(name)
    if value is not None and not value.strip():
        raise BadRequest(f"{name} must not be blank (leave it out to match any)")
    return value


def query_choice(name: str, choices: tuple[str, ...]) -> str | None:
    """A query parameter that takes one of `choices`, or is absent; an empty one is not
    "any", it is a value the document does not allow."""
    value = request.args.get(name)
    if value is not None and value not in choices:
        raise BadRequest(f"unknown {name} {value[:60]!r} (known: {', '.join(choices)})")
    return value


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
