"""Change OSD settings in the monitors' config database for a while, and put back exactly
what was there: the recovery-profile study's knob (actions/recovery_tuning.py).

Only the settings of SETTABLE, which decide how an OSD shares its time between clients and
recovery, and only where the running release says they change at runtime (`config help`:
`can_update_at_runtime`); a value is checked against the option's type, range and allowed
values as that release gives them, so no release's list is written down here. The setting
is made for every OSD (`config set osd ...`): an OSD with an override of its own (`osd.N`
in the database) would not follow it, so that is refused too.

`previous` is what the database held for each name in the `osd` section before (a value, or
None for nothing): the restore sets that value again or removes the entry.
"""

from __future__ import annotations

import time
from typing import Any

from clusters.ceph.admin import CephAdmin
from clusters.ceph.recovery_settings import option_text
from clusters.exceptions import AdminCommandFailed, ClusterError

SETTABLE = ("osd_mclock_profile", "osd_max_backfills", "osd_recovery_max_active",
            "osd_mclock_override_recovery_settings")
WHO = "osd"
TOOK_TIMEOUT_S = 15.0
MAX_OSDS_CHECKED = 32
_INTEGER_TYPES = ("uint", "int", "size", "secs")
_BOOLEAN = {"true": "true", "false": "false", "1": "true", "0": "false"}


def static_problems(settings: Any) -> list[str]:
    """What is wrong with `settings` before any cluster is asked: a mapping of SETTABLE names
    to strings, numbers or booleans."""
    if not isinstance(settings, dict) or not settings:
        return [f"settings must be a non-empty mapping of {', '.join(SETTABLE)} to values"]
    problems = []
    for name, value in settings.items():
        if name not in SETTABLE:
            problems.append(f"{name!r} is not a setting a run changes (it takes "
                            f"{', '.join(SETTABLE)})")
        elif not isinstance(value, str | int | float | bool) or value == "":
            problems.append(f"{name} must be a string, a number or a boolean, not {value!r}")
    return problems


def normalised(option: dict[str, Any], value: Any) -> str:
    """The value as `config set` takes it; ClusterError if the release would refuse it."""
    name, kind, text = option["name"], option.get("type"), option_text(value)
    if option.get("enum_values") and text not in option["enum_values"]:
        raise ClusterError(f"{name} {text!r} is not one of this release's values: "
                           f"{', '.join(option['enum_values'])}")
    if kind == "bool":
        if text not in _BOOLEAN:
            raise ClusterError(f"{name} must be true or false, not {text!r}")
        return _BOOLEAN[text]
    if kind in _INTEGER_TYPES or kind == "float":
        try:
            number = float(text) if kind == "float" else int(text)
        except ValueError:
            what = "a number" if kind == "float" else "a whole number"
            raise ClusterError(f"{name} must be {what}, not {text!r}") from None
        for bound, low in (("min", True), ("max", False)):
            limit = option.get(bound)
            if limit not in (None, "") and (number < float(limit) if low
                                            else number > float(limit)):
                raise ClusterError(f"{name} {text} is out of its range ({bound} {limit})")
        if kind == "uint" and number < 0:
            raise ClusterError(f"{name} must not be negative, not {text}")
    return text


def check(admin: CephAdmin, settings: dict[str, Any]) -> dict[str, str]:
    """The settings as they will be set ({name: value}); ClusterError names every problem of
    them on this cluster (an option its release lacks, one that needs a restart, a value it
    refuses, an OSD's own override)."""
    problems, wanted = [], {}
    for name, value in settings.items():
        try:
            option = admin.command("config help", key=name)
        except AdminCommandFailed:
            problems.append(f"{name} is not an option of this cluster's release")
            continue
        if not option.get("can_update_at_runtime"):
            problems.append(f"{name} takes effect only when an OSD restarts: not a setting "
                            "a run changes")
            continue
        try:
            wanted[name] = normalised(option, value)
        except ClusterError as exc:
            problems.append(str(exc))
    own = sorted(f"{entry['section']} has its own {entry['name']}"
                 for entry in admin.command("config dump") or []
                 if entry.get("name") in settings
                 and str(entry.get("section", "")).startswith("osd."))
    problems += [f"{o}: a setting for every OSD would not take on it" for o in own]
    if problems:
        raise ClusterError("; ".join(problems))
    return wanted


def previous(admin: CephAdmin, names: list[str]) -> dict[str, str | None]:
    """What the database holds for each name for every OSD (None: nothing)."""
    held = {entry["name"]: str(entry["value"]) for entry in admin.command("config dump") or []
            if entry.get("section") == WHO and entry.get("name") in names}
    return {name: held.get(name) for name in names}


def apply(admin: CephAdmin, settings: dict[str, str]) -> None:
    for name, value in settings.items():
        admin.command("config set", who=WHO, name=name, value=value)


def wait_put_back(admin: CephAdmin, before: dict[str, str | None],
                  timeout_s: float = TOOK_TIMEOUT_S) -> None:
    """Until every up OSD runs what was there before: the old value, or, for a name the
    database did not hold, nothing from the database any more; ClusterError otherwise."""
    deadline = time.monotonic() + timeout_s
    while True:
        lagging = sorted(
            f"{osd} still runs {name}={value}" for osd, values in _shown(admin, list(before))
            .items() for name, (value, source) in values.items()
            if (before[name] is None and source == "mon")
            or (before[name] is not None and value != option_text(before[name])))
        if not lagging:
            return
        if time.monotonic() > deadline:
            raise ClusterError(f"the settings were put back in the database, but after "
                               f"{timeout_s:.0f} s {'; '.join(lagging)}")
        time.sleep(0.5)


def put_back(admin: CephAdmin, before: dict[str, str | None]) -> None:
    """The database as `previous` read it, for these names."""
    for name, value in before.items():
        if name not in SETTABLE:  # a ledger record is not trusted with other names
            raise ClusterError(f"refusing to restore {name!r}: not a setting a run changes")
        if value is None:
            admin.command("config rm", who=WHO, name=name)
        else:
            admin.command("config set", who=WHO, name=name, value=str(value))


def _shown(admin: CephAdmin, names: list[str]) -> dict[str, dict[str, tuple[str, str]]]:
    """{osd.N: {name: (value, source)}} as each up OSD runs them (`config show` lists what
    does not come from the defaults: a name it leaves out is ("", "default"))."""
    up = [o["osd"] for o in (admin.command("osd dump") or {}).get("osds", []) if o.get("up")]
    shown = {}
    for osd in sorted(up)[:MAX_OSDS_CHECKED]:
        entries = {e["name"]: (option_text(e["value"]), str(e.get("source", "")))
                   for e in admin.command("config show", who=f"osd.{osd}") or []}
        shown[f"osd.{osd}"] = {name: entries.get(name, ("", "default")) for name in names}
    return shown


def running_values(admin: CephAdmin, names: list[str]) -> dict[str, dict[str, str]]:
    """{osd.N: {name: value}} as each up OSD runs them ("" for its default)."""
    return {osd: {name: value for name, (value, _) in values.items()}
            for osd, values in _shown(admin, names).items()}


def wait_taken(admin: CephAdmin, settings: dict[str, str],
               timeout_s: float = TOOK_TIMEOUT_S) -> dict[str, dict[str, str]]:
    """Until every up OSD runs with the settings; ClusterError names those that do not (the
    change did not take: the run must not be timed as if it had)."""
    deadline = time.monotonic() + timeout_s
    while True:
        shown = running_values(admin, list(settings))
        lagging = {osd: {n: v for n, v in values.items() if v != settings[n]}
                   for osd, values in shown.items()}
        lagging = {osd: values for osd, values in lagging.items() if values}
        if not lagging:
            return shown
        if time.monotonic() > deadline:
            said = "; ".join(
                f"{osd} runs " + ", ".join(f"{n}={v or 'its default'}" for n, v in values.items())
                for osd, values in sorted(lagging.items()))
            raise ClusterError(f"the settings did not take within {timeout_s:.0f} s: {said}")
        time.sleep(0.5)
