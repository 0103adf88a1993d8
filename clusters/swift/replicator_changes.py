"""Change how Swift's object replicators work for a while, and put back exactly what was
there: the Swift half of the recovery-settings study (actions/recovery_tuning.py).

Only the settings of SETTABLE, in the `[object-replicator]` section of the file each running
replicator was started with (clusters/swift/recovery_settings.py finds it from the
process's command line): a line of the section is replaced, added or, on the way back,
removed; every other line, comment and section of the operator's file stays as it was. The
file is replaced whole (a new file beside it, renamed over it, with its owner and mode), then
the replicator is restarted, since Swift reads its file only at start, and the change counts
as taken once the running replicator's file says so.

`previous` is what each replicator's section held for each name (a value, or None for no
line): the restore writes that back.
"""

from __future__ import annotations

import base64
import re
import shlex
from typing import Any

from clusters.access import services
from clusters.access.inventory import Cluster, Service
from clusters.exceptions import ClusterError
from clusters.swift import recovery_settings

SECTION = "object-replicator"
SETTABLE = ("concurrency", "handoffs_first")
MOST_CONCURRENCY = 64
_BOOLEAN = {"true": "true", "false": "false", "1": "true", "0": "false", "yes": "true",
            "no": "false"}
_HEADER = re.compile(r"^\s*\[([^\]]+)\]\s*$")


def normalised(name: str, value: Any) -> str:
    """The value as the file will say it; ClusterError if Swift would not take it."""
    if name == "concurrency":
        if isinstance(value, bool) or not isinstance(value, int | str) \
                or not str(value).isdigit() or not 1 <= int(value) <= MOST_CONCURRENCY:
            raise ClusterError(f"concurrency must be a whole number in [1, {MOST_CONCURRENCY}], "
                               f"not {value!r}")
        return str(int(value))
    text = str(value).lower() if isinstance(value, bool | str) else None
    if text not in _BOOLEAN:
        raise ClusterError(f"{name} must be true or false, not {value!r}")
    return _BOOLEAN[text]


def static_problems(settings: Any) -> list[str]:
    """What is wrong with `settings` before any cluster is asked."""
    if not isinstance(settings, dict) or not settings:
        return [f"settings must be a non-empty mapping of {', '.join(SETTABLE)} to values"]
    problems = []
    for name, value in settings.items():
        if name not in SETTABLE:
            problems.append(f"{name!r} is not a replicator setting a run changes (it takes "
                            f"{', '.join(SETTABLE)})")
            continue
        try:
            normalised(name, value)
        except ClusterError as exc:
            problems.append(str(exc))
    return problems


def _option(line: str) -> str | None:
    """The option a line sets (`name = value` or `name: value`), None for anything else."""
    stripped = line.strip()
    if not stripped or stripped[0] in "#;[":
        return None
    match = re.match(r"([^=:\s]+)\s*[=:]", stripped)
    return match.group(1) if match else None


def edit(text: str, values: dict[str, str | None]) -> tuple[str, dict[str, str | None]]:
    """The file with the section's line of each name set to its value, in place (a name
    without a line gets one just under the section's header; None removes the line), and
    what the section held for each name before (None: no line). Editing back with what it
    returns gives the file it started from."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines)
                  if (m := _HEADER.match(line)) and m.group(1).strip() == SECTION), None)
    if start is None:
        if not any(value is not None for value in values.values()):
            return text, dict.fromkeys(values)
        tail = "" if not text or text.endswith("\n") else "\n"
        added = "".join(f"{name} = {value}\n" for name, value in values.items()
                        if value is not None)
        return f"{text}{tail}\n[{SECTION}]\n{added}", dict.fromkeys(values)
    end = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])),
               len(lines))
    previous: dict[str, str | None] = dict.fromkeys(values)
    body: list[str] = []
    for line in lines[start + 1:end]:
        name = _option(line)
        if name not in values:
            body.append(line)
        elif previous[name] is None:  # its first line: the one Swift reads
            previous[name] = re.split(r"[=:]", line, maxsplit=1)[1].strip()
            if values[name] is not None:
                body.append(f"{name} = {values[name]}\n")
    added = [f"{name} = {value}\n" for name, value in values.items()
             if value is not None and previous[name] is None]
    header = lines[start] if lines[start].endswith("\n") else lines[start] + "\n"
    return "".join([*lines[:start], header, *added, *body, *lines[end:]]), previous


def replicators(cluster: Cluster) -> list[Service]:
    """Every object replicator of the inventory, one per storage node."""
    found = cluster.services_of_kind("object-replicator")
    if not found:
        raise ClusterError(f"{cluster.name} has no object-replicator service in its inventory")
    return list(found)


def _write(cluster: Cluster, service: Service, path: str, text: str) -> None:
    """Replace the file: a new one beside it with its owner and mode, renamed over it."""
    quoted = shlex.quote(path)
    payload = base64.b64encode(text.encode()).decode()
    services.run(cluster, service, (
        f"t=$(mktemp {shlex.quote(path + '.faultline.XXXXXX')}) && "
        f"printf %s {payload} | base64 -d >\"$t\" && chown --reference={quoted} \"$t\" && "
        f"chmod --reference={quoted} \"$t\" && mv -f \"$t\" {quoted}"), timeout=30)


def _set(cluster: Cluster, service: Service,
         values: dict[str, str | None]) -> dict[str, str | None]:
    path, text = recovery_settings.read_conf(cluster, service)
    if path.endswith(".d"):
        raise ClusterError(f"{service.name} reads a directory of files ({path}): a change "
                           "there is not made")
    new_text, previous = edit(text, values)
    if new_text != text:
        _write(cluster, service, path, new_text)
        services.restart(cluster, service)
    return previous


def previous(cluster: Cluster, names: list[str]) -> dict[str, dict[str, str | None]]:
    """What each replicator's section holds now for these names (nothing is changed)."""
    found = {}
    for service in replicators(cluster):
        _, text = recovery_settings.read_conf(cluster, service)
        found[service.name] = edit(text, dict.fromkeys(names))[1]
    return found


def apply(cluster: Cluster, wanted: dict[str, str]) -> None:
    for service in replicators(cluster):
        _set(cluster, service, dict(wanted))


def put_back(cluster: Cluster, before: dict[str, dict[str, str | None]]) -> None:
    """Each replicator named in `before` gets its section's lines back."""
    known = {s.name: s for s in replicators(cluster)}
    for name, values in before.items():
        if name not in known:
            raise ClusterError(f"{name} is not an object replicator of {cluster.name}")
        _set(cluster, known[name], values)


def running(cluster: Cluster) -> dict[str, dict[str, str]]:
    """What each running replicator's file says for the settable names (Swift's default
    where its file says nothing)."""
    wanted = {name: recovery_settings.REPLICATOR[name] for name in SETTABLE}
    found = {}
    for service in replicators(cluster):
        path, text = recovery_settings.read_conf(cluster, service)
        settings = recovery_settings.options_of(recovery_settings.parse(text), SECTION,
                                                wanted, path)
        found[service.name] = {s.name: s.value for s in settings}
    return found


def check_taken(cluster: Cluster, wanted: dict[str, str]) -> dict[str, dict[str, str]]:
    """Every replicator runs with the wanted values; ClusterError naming those that do not."""
    now = running(cluster)
    off = [f"{name} runs with {key}={values[key]}" for name, values in now.items()
           for key, value in wanted.items() if values.get(key) != value]
    if off:
        raise ClusterError("the replicators did not take the change: " + "; ".join(off))
    return now
