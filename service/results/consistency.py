"""The consistency checker's classes of a run (loadgen.consistency, stored in the run's
verify record): lines for the report, and the figures a comparison puts side by side."""

from __future__ import annotations

from typing import Any

# each class, in the report's order, with what its "time since" is measured from
CLASSES = (
    ("lost", "lost", "since its acknowledgement"),
    ("stale", "stale reads", "after a newer version was acknowledged"),
    ("resurrected", "resurrected", "after its delete was acknowledged"),
    ("listing_gap", "listing gaps", "after its acknowledgement"),
    ("recovered", "recovered", "after the write's unknown outcome"),
    ("unexpected", "unexpected", ""),
)


def consistency_of(verify: dict[str, Any] | None) -> dict[str, Any] | None:
    """The checker's record of a run; None for a run recorded before it existed."""
    record = (verify or {}).get("consistency")
    return record if isinstance(record, dict) and "classes" in record else None


def counted(record: dict[str, Any], kind: str) -> int | None:
    """A class's figure: reads for stale reads, objects for the others (a record made
    before the checker counted objects: its observations); None for listing gaps when no
    listing was read."""
    if kind == "listing_gap" and not record.get("listings"):
        return None
    found = record["classes"][kind]
    return found["count"] if kind == "stale" else found.get("objects", found["count"])


def consistency_figures(verify: dict[str, Any] | None) -> dict[str, int | None]:
    """Each class's figure (counted), None where not checked."""
    record = consistency_of(verify)
    return {f"consistency_{kind}": counted(record, kind) if record else None
            for kind, _, _ in CLASSES}


def consistency_rows(verify: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per class (key, label, count, "up to N s after ...", examples); none for a
    run not checked."""
    record = consistency_of(verify)
    if record is None:
        return []
    rows = []
    for kind, label, since in CLASSES:
        found = record["classes"][kind]
        longest = found.get("max_since_ack_s")
        count = counted(record, kind)
        rows.append({"kind": kind, "label": label, "count": "n/a" if count is None else count,
                     "when": (f"up to {longest:.3f} s {since}"
                              if found["count"] and longest is not None and since else ""),
                     "examples": found["examples"]})
    return rows


def consistency_lines(verify: dict[str, Any] | None) -> list[str]:
    """The report's lines: every class's count, then what each class found."""
    record = consistency_of(verify)
    if record is None:  # nothing verified, a driver that could not verify, an older run
        return ["  consistency                  n/a: not checked for this run"]
    rows = consistency_rows(verify)
    counts = ", ".join(f"{row['label']} {row['count']}" for row in rows)
    lines = [f"  consistency                  {counts}; {covered(record)}"]
    for row in rows:
        if row["count"] and row["count"] != "n/a":
            when = f", {row['when']}" if row["when"] else ""
            lines.append(f"    {row['label']}: {row['count']}{when}; e.g. "
                         + ", ".join(row["examples"]))
    return lines


def covered(record: dict[str, Any]) -> str:
    """What the history covered: "over N operations", and what it left out."""
    text = f"over {record['operations']:,} operations"
    if record.get("listings"):
        text += f" ({record['listings']:,} of them listings)"
    if record.get("left_out"):
        text += f" ({record['left_out']:,} more were not recorded: the history is bounded)"
    return text
