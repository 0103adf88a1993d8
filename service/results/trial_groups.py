"""Runs compared as groups of trials: each group's figures as median [min-max] (and a 95%
interval from 5 trials), and, between two groups, whether each difference is larger than the
noise (service.results.spread).

A group is the runs of one `faultline run --trials N` (their `trial_group`); a run made alone
is a group of one. A run whose baseline did not hold is left out of its group's figures, as
it is of the comparison's table (one that injected anyway counts, marked).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from .capacity_change import capacity_verdict
from .report import FIGURE_KEYS, kept_out
from .spread import Spread, spread, verdict

# the figures that have a spread: numbers, not tables
NUMERIC = tuple(k for k in FIGURE_KEYS if k not in ("errors_by_class", "errors_by_op"))
COUNTS = ("errors", "lost_objects", "corrupt_objects")  # whole numbers, written as such
SINGLE_TRIALS = ("Each figure comes from a single run on each side: whether a difference is "
                 "larger than the noise cannot be told. Repeat each with `faultline run "
                 "--trials 3` (or more) and compare the groups.")


def trial_groups(entries: list[dict[str, Any]], cells: dict[str, list[dict[str, Any]]],
                 fmt) -> dict[str, Any]:
    """The groups of the compared runs (`cells`: the comparison's table, whose value is None
    for a run kept out), and the verdict of each figure between each two groups; `fmt(key,
    value)` writes a figure with its unit."""
    order: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        key = e.get("trial_group") or f"run:{e.get('run_id')}:{i}"
        order.setdefault(key, []).append(i)
    groups, spreads = [], []
    for members in order.values():
        first = entries[members[0]]
        figures = {k: spread([cells[k][i]["value"] for i in members]) for k in NUMERIC}
        spreads.append(figures)
        groups.append({
            "label": _label(first, len(members)),
            "trial_group": first.get("trial_group"),
            "run_ids": [entries[i]["run_id"] for i in members],
            "left_out": [entries[i]["run_id"] for i in members if kept_out(entries[i])],
            "figures": {k: s.as_dict() if s else None for k, s in figures.items()},
            # a scale experiment's capacity before and after, judged over the group's trials
            "capacity": capacity_verdict([entries[i].get("capacity") for i in members
                                          if not kept_out(entries[i])]),
        })
    differences = []
    for a, b in combinations(range(len(groups)), 2):
        figures = {}
        for k in NUMERIC:
            sa, sb = spreads[a][k], spreads[b][k]
            if sa is None or sb is None:
                continue
            said = verdict(sa, sb)
            figures[k] = {"verdict": said, "text": (
                f"{groups[a]['label']} {describe(k, sa, fmt)} vs {groups[b]['label']} "
                f"{describe(k, sb, fmt)}: {said or 'no verdict (a single run on a side)'}")}
        differences.append({"groups": [a, b], "figures": figures})
    single = all(len(m) == 1 for m in order.values())
    return {"groups": groups, "differences": differences,
            "note": SINGLE_TRIALS if single else None}


def _label(entry: dict[str, Any], n: int) -> str:
    base = f"{entry.get('cluster')} ({entry.get('api')})"
    return f"{base}, {n} trials from run {entry.get('run_id')}" if n > 1 \
        else f"{base}, run {entry.get('run_id')}"


def describe(key: str, s: Spread | dict[str, Any], fmt) -> str:
    """A figure's spread in words: `median [min to max]`, and its 95% interval if any."""
    if isinstance(s, dict):
        s = Spread(**s)

    def f(value: float) -> str:
        whole = key in COUNTS and float(value).is_integer()
        return fmt(key, int(value) if whole else value)

    if s.n == 1:
        return f(s.median)
    text = f"{f(s.median)} [{f(s.low)} to {f(s.high)}]"
    if s.ci_low is not None:
        text += f" (95% {f(s.ci_low)} to {f(s.ci_high)})"
    return text
