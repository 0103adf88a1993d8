"""Runs compared as groups of trials: each group's figures as median [min-max] (and the
median's 95% interval from 6 trials), and, between two groups, each outcome figure's
verdict (service.results.verdicts, docs/statistics.md).

A group is the runs of one `faultline run --trials N` (their `trial_group`); a run made alone
is a group of one. Only completed runs whose baseline held and whose fault took as intended
enter a group's figures and verdicts; each group says which runs were left out, and why.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from .capacity_change import capacity_verdict
from .figure_definitions import BY_KEY
from .report import FIGURE_KEYS
from .spread import Spread, spread
from .verdicts import METHOD, OUTCOMES, compare_groups, observe

# the figures that have a spread: numbers, not tables
NUMERIC = tuple(k for k in FIGURE_KEYS if k not in ("errors_by_class", "errors_by_op")) + \
    tuple(k for k in OUTCOMES if k not in FIGURE_KEYS)
COUNTS = tuple(k for k in NUMERIC if BY_KEY[k].count)  # whole numbers
ENTERS = ("completed", "deviated")  # a deviated run measured the fault; it failed a hypothesis
SINGLE_TRIALS = ("Each figure comes from a single run on each side: whether a difference is "
                 "larger than the noise cannot be told. Repeat each with `faultline run "
                 "--trials 3` (or more) and compare the groups.")


def left_out_why(entry: dict[str, Any]) -> str | None:
    """Why a run does not enter its group's figures and verdicts; None when it does."""
    if entry.get("run_id") is None:
        return "no run was recorded"
    validity = entry.get("validity") or {}
    if validity.get("valid") is False:
        return "its baseline did not hold" + (
            " (the fault was injected anyway)" if validity.get("injected_anyway") else "")
    if entry.get("status") not in ENTERS:
        error = f": {entry['error']}" if entry.get("error") else ""
        return f"the run is {entry.get('status')}{error}"
    return None


def trial_groups(entries: list[dict[str, Any]], cells: dict[str, list[dict[str, Any]]],
                 fmt) -> dict[str, Any]:
    """The groups of the compared runs, and the verdict of each outcome figure between each
    two groups; `fmt(key, value)` writes a figure with its unit. (`cells`, the comparison's
    table, is no longer read: a group takes its runs' own figures and reasons.)"""
    order: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        key = e.get("trial_group") or f"run:{e.get('run_id')}:{i}"
        order.setdefault(key, []).append(i)
    groups, members_in = [], []
    for members in order.values():
        first = entries[members[0]]
        why = {entries[i]["run_id"]: left_out_why(entries[i]) for i in members}
        enter = [entries[i] for i in members if why[entries[i]["run_id"]] is None]
        members_in.append(enter)
        figures = {k: spread([e.get(k) for e in enter]) for k in NUMERIC}
        groups.append({
            "label": _label(first, len(members), len(members) - len(enter)),
            "name": _name(first),
            "trial_group": first.get("trial_group"),
            "run_ids": [entries[i]["run_id"] for i in members],
            "entered": len(enter),
            "left_out": [r for r, w in why.items() if w is not None],
            "left_out_why": [{"run_id": r, "why": w} for r, w in why.items() if w is not None],
            "figures": {k: s.as_dict() if s else None for k, s in figures.items()},
            # a scale experiment's capacity before and after, judged over the group's trials
            "capacity": capacity_verdict([e.get("capacity") for e in enter]),
        })
    differences = []
    for a, b in combinations(range(len(groups)), 2):
        names = (groups[a]["name"], groups[b]["name"])
        if names[0] == names[1]:
            names = (groups[a]["label"], groups[b]["label"])
        observed = {k: ([observe(k, e) for e in members_in[a]],
                        [observe(k, e) for e in members_in[b]]) for k in OUTCOMES}
        differences.append({"groups": [a, b], **compare_groups(observed, names, fmt)})
    single = all(len(m) == 1 for m in order.values())
    return {"groups": groups, "differences": differences, "method": METHOD,
            "note": SINGLE_TRIALS if single else None}


def _name(entry: dict[str, Any]) -> str:
    return f"{entry.get('cluster')} ({entry.get('api')})"


def _label(entry: dict[str, Any], n: int, left_out: int) -> str:
    out = f", {left_out} left out" if left_out else ""
    return f"{_name(entry)}, {n} trials from run {entry.get('run_id')}{out}" if n > 1 \
        else f"{_name(entry)}, run {entry.get('run_id')}{out}"


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
