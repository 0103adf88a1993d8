"""What a run's recovery settings (service/runs/recovery_settings.py) say about its figures.

- `setting_notes`: each setting that is not the release's default, a timer by how much it
  is shorter or longer (a lab's shortened timers make its recovery times lab times), a
  setting that differs across daemons or nodes, and what could not be read;
- `setting_differences`: between the runs of a comparison, each setting that the runs of
  one kind of system ran with different values.
"""

from __future__ import annotations

from typing import Any


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _note(setting: dict[str, Any], release: str) -> str | None:
    name, value, default = setting["name"], setting["value"], setting["default"]
    spread = f" (differs: {', '.join(setting['differs'])})" if setting.get("differs") else ""
    if default is None or value == default:
        return f"{name} is {value} on {setting['where']}{spread}" if spread else None
    of = f"{release}'s default" if release else "the default"
    v, d = _number(value), _number(default)
    if setting.get("timer") and v and d and v != d:
        how = f"{d / v:.3g}x shorter" if v < d else f"{v / d:.3g}x longer"
        return f"{name} is {value} s, {how} than {of} {default} s{spread}"
    return f"{name} is {value}, not {of} {default}{spread}"


def setting_notes(record: dict[str, Any] | None) -> list[str]:
    """One line per setting that is not its default, or differs across the cluster."""
    if not record:
        return []
    release = _short_release(record.get("release") or "")
    notes = [n for s in record.get("settings") or [] if (n := _note(s, release))]
    return notes + [f"not read: {error}" for error in record.get("errors") or []]


def _short_release(release: str) -> str:
    """ "ceph version 18.2.7 (hash) reef (stable)" -> "Ceph 18.2.7"; "swift 2.30.0" as is."""
    words = release.split()
    if release.startswith("ceph version") and len(words) > 2 and ";" not in release:
        return f"Ceph {words[2]}"
    return release.split(";")[0].strip()


def setting_differences(entries: list[dict[str, Any]], label) -> list[str]:
    """Each setting that runs of one kind of system ran with different values."""
    out = []
    for kind in dict.fromkeys(e["cluster_kind"] for e in entries):
        same = [e for e in entries if e["cluster_kind"] == kind and e.get("recovery_settings")]
        values: dict[str, dict[str, str]] = {}
        for e in same:
            for s in e["recovery_settings"].get("settings") or []:
                values.setdefault(s["name"], {})[label(e)] = str(s["value"])
        for name, by_run in values.items():
            if len(set(by_run.values())) > 1:  # a setting one release lacks is not compared
                runs = ", ".join(f"{run}: {value}" for run, value in by_run.items())
                out.append(f"The {kind} runs ran with different {name} ({runs}): their "
                           "recovery times are not measured under the same settings.")
    return out


def recovery_lines(record: dict[str, Any] | None, notes: list[str]) -> list[str]:
    """The text report's block: every setting read, then what to make of them."""
    if not record:
        return []
    release = _short_release(record.get("release") or "") or "release unknown"
    lines = ["", f"  recovery settings ({release}, read before the fault):"]
    for s in record.get("settings") or []:
        default = "" if s["default"] is None or s["value"] == s["default"] \
            else f"  default {s['default']}"
        lines.append(f"    {s['name']:<34} {s['value']}{default}  ({s['where']})")
    return lines + [f"  recovery: {note}" for note in notes]
