"""Two tools measured by pairs, as P1 judges a ratio: each pair runs each tool twice, A B B A
(the next pair B A A B), back to back on a cluster first let go idle (bench.load.wait_idle),
and deletes what its four runs wrote only after them: a cleanup and a wait between the runs
compared would let the cluster drift further between them. A drift over the pair then
weighs on both tools alike.

A tool is a callable (cluster, seconds) -> (ops/s per operation, client CPU ms per
operation, what deletes its objects).
"""

from __future__ import annotations

from collections.abc import Callable

from .load import wait_idle
from .results import Row, median, median_interval

Measured = tuple[dict[str, float], dict[str, float]]  # ops/s, client CPU ms per op
Cleanup = Callable[[], None]  # deletes what a run wrote
Tool = Callable[..., tuple[dict[str, float], dict[str, float], Cleanup]]
OPS = ("write", "read")


def pairs(cluster, kind: str, count: int, seconds: float, label: str,
          tools: tuple[Tool, Tool], check: Callable[[str], None] = lambda when: None
          ) -> dict[str, dict[str, list]]:
    """Each tool's ops/s and CPU per op of each operation, per pair (its two runs'), and the
    wait for an idle `kind` lab before each pair. `check(when)` runs before each pair and
    after the last (P1-ceph's: the cluster is whole); it stops the measurement by raising
    or exiting."""
    keys = (*OPS, *(f"{op}_cpu_ms" for op in OPS))
    found: dict[str, dict[str, list]] = {tool.__name__: {key: [] for key in keys}
                                         for tool in tools}
    found["pair"] = {"idle_wait_s": []}
    for pair in range(count):  # A B B A, then B A A B: neither always runs first or last
        first, second = tools if pair % 2 == 0 else tools[::-1]
        runs: dict[str, list[Measured]] = {tool.__name__: [] for tool in tools}
        found["pair"]["idle_wait_s"].append(round(wait_idle(kind), 1))
        check(f"before pair {pair + 1} ({label})")
        cleanups: list[Cleanup] = []
        try:
            for tool in (first, second, second, first):
                rates, cpu_ms, cleanup = tool(cluster, seconds)
                cleanups.append(cleanup)
                runs[tool.__name__].append((rates, cpu_ms))
                print(f"{label}, pair {pair + 1}: {tool.__name__}: " + ", ".join(
                    f"{op} {rates[op]:.0f} ops/s ({cpu_ms[op]:.3f} ms CPU/op)" for op in OPS),
                    flush=True)
        finally:
            for cleanup in cleanups:
                cleanup()
        for name, measured in runs.items():
            for key, value in pair_figures(measured).items():
                found[name][key].append(value)
    check(f"after the last pair ({label})")
    return found


def pair_figures(measured: list[Measured]) -> dict[str, float]:
    """One tool's figures over its runs in a pair (of equal length): the mean ops/s, and CPU
    per op over all their operations (each run's CPU is its CPU per op times its ops)."""
    figures = {}
    for op in OPS:
        ops = [rates[op] for rates, _ in measured]
        figures[op] = sum(ops) / len(ops)
        figures[f"{op}_cpu_ms"] = sum(cpu[op] * rates[op] for rates, cpu in measured) / sum(ops)
    return figures


def aa_rows(found: dict[str, dict[str, list]], first: str, second: str, row_id: str,
            what: str, reference_name: str, count: int, seconds: float,
            confidence: float) -> list[Row]:
    """The A/A check's rows: one tool (`first`, `second`: its two names in `found`) against
    itself by the same pairs, per operation. Their interval is the method's own spread on
    this machine, at this moment, where no difference exists: a target band narrower than
    it cannot be shown here, whatever the client. `what` names the check ("A/A: rados bench
    against itself, 4 KiB {op}, ..."), with `{op}` for the operation."""
    rows = []
    for op in OPS:
        a, b = found[first][op], found[second][op]
        ratios = [x / y for x, y in zip(a, b, strict=True)]
        low, high, coverage = median_interval(ratios, confidence)
        rows.append(Row(
            row_id, f"{what.replace('{op}', op)}, median of {count} pairs of 2 runs each (pair "
            f"ratios' median {median(ratios):.3f}, {coverage:.2%} interval {low:.3f}-"
            f"{high:.3f})", median(a), "ops/s", median(b), reference_name,
            "(for information: the method's spread where there is no difference)", None, "",
            {"first": a, "second": b, "seconds": seconds, "pair_ratios": ratios,
             "ratio_median": median(ratios), "ratio_low": low, "ratio_high": high,
             "coverage": coverage, "runs_per_pair": 2,
             "idle_wait_s": found["pair"]["idle_wait_s"]}))
    return rows
