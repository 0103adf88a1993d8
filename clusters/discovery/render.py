"""Write a discovered cluster as a commented inventory file for a person to review.

Each entry is one YAML flow mapping (as in clusters/access/inventory.py's own example) under a
comment saying where it came from and, marked TODO, what is left to check. PyYAML writes
every value; this module only lays out the lines and the comments. The text is read
back with the inventory loader before it is returned: a file it could not load is never
written.
"""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime

import yaml

from clusters.access.inventory import parse_inventory
from clusters.discovery.draft import TODO, DraftCluster, Entry
from clusters.exceptions import InventoryError

WIDTH = 100
PROTECTED_NOTE = ("protected: this cluster takes no fault (probes, restores and heals still "
                  "work). To let Faultline inject faults into it, change this line to "
                  "`chaos: allowed`.")


def inventory_text(draft: DraftCluster, command: str, now: datetime | None = None) -> str:
    """The inventory text of `draft` (one cluster), checked by the inventory loader."""
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    todos = draft.todo_count()
    lines = _comment("", f"Faultline inventory written by `{command}` at {stamp}, from "
                         f"{draft.origin}. No secret is in it, only paths and variable "
                         f"names. Review it before use: {todos} thing(s) discovery could not "
                         f"learn are marked {TODO} (grep -n {TODO}).")
    lines += ["clusters:", f"  {_flow(draft.name)}:", f"    kind: {draft.kind}"]
    lines += _comment("    ", PROTECTED_NOTE)
    lines.append("    chaos: protected")
    for note in draft.notes:
        lines += _comment("    ", note)
    lines += _comments("    ", draft.ssh)
    if draft.ssh.value:
        lines.append(f"    ssh: {_flow(draft.ssh.value)}")
    for key, entries in (("nodes", draft.nodes), ("disks", draft.disks),
                         ("services", draft.services)):
        lines.append(f"    {key}:" if entries else f"    {key}: []")
        for entry in entries:
            lines += _comments("      ", entry)
            lines.append(f"      - {_flow(entry.value)}")
    lines += _comments("    ", draft.client)
    lines.append("    client:")
    for key, value in draft.client.value.items():
        lines.append(f"      {key}: {_flow(value)}")
    for hint in draft.client_hints:
        lines += _comment("      ", hint, wrap=hint.startswith(TODO))
    text = "\n".join(lines) + "\n"
    _check(text, draft)
    return text


def _flow(value) -> str:
    """One value as a single line of YAML (a flow mapping for a mapping)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=float("inf"), sort_keys=False)
    return text.removesuffix("\n").removesuffix("\n...").strip()


def _comments(indent: str, entry: Entry) -> list[str]:
    lines = _comment(indent, entry.source) if entry.source else []
    for todo in entry.todos:
        lines += _comment(indent, f"{TODO}: {todo}")
    return lines


def _comment(indent: str, text: str, wrap: bool = True) -> list[str]:
    if not wrap:
        return [f"{indent}# {text}"]
    return textwrap.wrap(text, WIDTH, initial_indent=f"{indent}# ",
                         subsequent_indent=f"{indent}#   ", break_long_words=False,
                         break_on_hyphens=False)


def _check(text: str, draft: DraftCluster) -> None:
    raw = yaml.safe_load(text)
    if raw["clusters"][draft.name] != draft.spec():
        raise InventoryError(f"the inventory written for {draft.name!r} does not read back "
                             "as discovered (a bug in clusters/discovery/render.py)")
    parse_inventory(raw, source=f"the discovered inventory of {draft.name!r}")
