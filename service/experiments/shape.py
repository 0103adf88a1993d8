"""The shape of a Chaos Toolkit experiment, checked before chaoslib's own validation.

chaoslib checks what an experiment means but trusts its shape: a `"method": null`, a
control that is a number or an env configuration without a key end in a TypeError deep in
its code (a 500 on the API, a traceback on the CLI). This JSON Schema states the types of
what chaoslib and Faultline read, so such a document is refused with one message naming
the place; everything else is left to chaoslib.
"""

from __future__ import annotations

import math
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

from .exceptions import ExperimentError

# a process provider's arguments may be a command line; a python one's are keywords
PROVIDER = {"type": "object", "required": ["type"], "properties": {
    "type": {"type": "string"}, "module": {"type": "string"}, "func": {"type": "string"},
    "arguments": {"type": ["object", "string", "array"]}, "path": {"type": "string"}},
    "if": {"properties": {"type": {"const": "python"}}},
    "then": {"properties": {"arguments": {"type": "object"}}}}
MAX_PAUSE_S = 86_400
# seconds (chaoslib's time.sleep refuses NaN and below 0, overflows on 1e300, and a pause
# of 1e9 would hold the fault for decades), or a "${name}" from the configuration
PAUSE = {"anyOf": [{"type": "string"}, {"type": "number", "finite": True, "minimum": 0,
                                        "maximum": MAX_PAUSE_S}]}
ACTIVITY = {"type": "object", "properties": {
    "type": {"type": "string"}, "name": {"type": "string"}, "ref": {"type": "string"},
    "provider": PROVIDER, "background": {"type": "boolean"},
    "pauses": {"type": "object", "properties": {"before": PAUSE, "after": PAUSE}},
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


def _finite(validator, wanted: bool, instance: Any, schema: dict):
    """The `finite` keyword: NaN and Infinity (which json.loads reads) pass every bound."""
    if wanted and validator.is_type(instance, "number") and not math.isfinite(instance):
        yield ValidationError(f"{instance!r} is not a finite number")


_VALIDATOR = validators.extend(Draft202012Validator, {"finite": _finite})(EXPERIMENT)


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
