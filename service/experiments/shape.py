"""The shape of a Chaos Toolkit experiment, checked before chaoslib's own validation.

chaoslib checks what an experiment means but trusts its shape: a `"method": null`, a
control that is a number or an env configuration without a key end in a TypeError deep in
its code (a 500 on the API, a traceback on the CLI). This JSON Schema states the types of
what chaoslib and Faultline read, so such a document is refused with one message naming
the place; everything else is left to chaoslib.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from .exceptions import ExperimentError

# a process provider's arguments may be a command line; a python one's are keywords
PROVIDER = {"type": "object", "required": ["type"], "properties": {
    "type": {"type": "string"}, "module": {"type": "string"}, "func": {"type": "string"},
    "arguments": {"type": ["object", "string", "array"]}, "path": {"type": "string"}},
    "if": {"properties": {"type": {"const": "python"}}},
    "then": {"properties": {"arguments": {"type": "object"}}}}
ACTIVITY = {"type": "object", "properties": {
    "type": {"type": "string"}, "name": {"type": "string"}, "ref": {"type": "string"},
    "provider": PROVIDER, "background": {"type": "boolean"},
    "pauses": {"type": "object", "properties": {
        "before": {"type": "number"}, "after": {"type": "number"}}},
    "controls": {"type": "array", "items": {"type": "object"}}}}
ACTIVITIES = {"type": "array", "items": ACTIVITY}
# a value, or {"type": "env", "key": "NAME", ...}
CONFIGURATION_ENTRY = {"if": {"type": "object"}, "then": {
    "required": ["type"], "properties": {"type": {"type": "string"}, "key": {"type": "string"}},
    "if": {"properties": {"type": {"const": "env"}}}, "then": {"required": ["key"]}}}
EXPERIMENT = {
    "type": "object",
    "properties": {
        "version": {"type": "string"},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "configuration": {"type": "object", "additionalProperties": CONFIGURATION_ENTRY},
        "secrets": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": CONFIGURATION_ENTRY}},
        "controls": {"type": "array", "items": {
            "type": "object", "required": ["name", "provider"],
            "properties": {"name": {"type": "string"}, "provider": PROVIDER}}},
        "steady-state-hypothesis": {"type": "object", "properties": {
            "title": {"type": "string"}, "probes": ACTIVITIES}},
        "method": ACTIVITIES,
        "rollbacks": ACTIVITIES,
        "runtime": {"type": "object"},
        "extensions": {"type": "array", "items": {"type": "object"}},
        "contributions": {"type": "object"},
    },
}
_VALIDATOR = Draft202012Validator(EXPERIMENT)


def check_shape(document: Any) -> None:
    """ExperimentError naming the first place where the document is not shaped as an
    experiment; nothing if it is."""
    error = best_match(_VALIDATOR.iter_errors(document))
    if error is None:
        return
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    raise ExperimentError(f"the experiment{where} is not shaped as Chaos Toolkit "
                          f"expects: {_short(error.message)}")


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:197] + "..."
