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


def consistency_figures(verify: dict[str, Any] | None) -> dict[str, int | None]:
    """Each class's count (stale_reads, resurrected_objects, ...), None where not checked."""
    record = consistency_of(verify)
    classes = record["classes"] if record else {}
    return {f"consistency_{kind}": (classes.get(kind) or {}).get("count")
            for kind, _, _ in CLASSES}


def consistency_lines(verify: dict[str, Any] | None) -> list[str]:
    """The report's lines: every class's count, then what each class found."""
    record = consistency_of(verify)
    if record is None:  # nothing verified, a load of several drivers, or an older run
        return ["  consistency                  n/a: not checked for this run"]
    classes = record["classes"]
    counts = ", ".join(f"{label} {classes[kind]['count']}" for kind, label, _ in CLASSES)
    covered = f"over {record['operations']:,} operations"
    if record.get("left_out"):
        covered += f" ({record['left_out']:,} more were not recorded: the history is bounded)"
    lines = [f"  consistency                  {counts}; {covered}"]
    for kind, label, since in CLASSES:
        found = classes[kind]
        if not found["count"]:
            continue
        longest = found.get("max_since_ack_s")
        when = f", up to {longest:.3f} s {since}" if longest is not None and since else ""
        lines.append(f"    {label}: {found['count']}{when}; e.g. "
                     + ", ".join(found["examples"]))
    return lines
