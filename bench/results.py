"""What a benchmark reports: rows of figures, each against its reference and its target.

Every benchmark prints its rows as it measures them and, with `--json FILE`, writes them
for bench/run_all.py, which gathers them into one summary. A row that misses its target
says why in `gap`: an honest statement, never a silent pass.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Row:
    id: str  # P1-ceph, P2-swift, ...
    what: str
    value: float | None  # Faultline's figure
    unit: str
    reference: float | None = None  # the reference tool's figure, same session
    reference_name: str = ""
    target: str = ""  # the target as the issue states it
    met: bool | None = None
    gap: str = ""  # why a target is not met (or could not be measured)
    detail: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.reference:
            return None
        return self.value / self.reference

    def line(self) -> str:
        value = "n/a" if self.value is None else f"{self.value:,.3f} {self.unit}"
        ref = ""
        if self.reference is not None:
            ref = f" | {self.reference_name} {self.reference:,.3f} {self.unit}"
            if self.ratio is not None:
                ref += f" | ratio {self.ratio:.3f}"
        verdict = {True: "met", False: "NOT met", None: "n/a"}[self.met]
        gap = f" ({self.gap})" if self.gap else ""
        return f"{self.id:9} {self.what}: {value}{ref} | target {self.target}: {verdict}{gap}"


def arguments(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--json", type=Path, help="write the rows here as JSON")
    return parser


def report(rows: list[Row], json_path: Path | None) -> None:
    for row in rows:
        print(row.line(), flush=True)
    if json_path is not None:
        json_path.write_text(json.dumps([asdict(r) | {"ratio": r.ratio} for r in rows],
                                        indent=2))


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q% of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def median_interval(values: list[float], confidence: float = 0.9) -> tuple[float, float, float]:
    """(low, high, coverage): an exact distribution-free interval for the median of what
    produced `values`, the order statistics x(k) and x(n+1-k) with the largest k whose
    coverage 1 - 2 P(Binomial(n, 1/2) <= k - 1) is at least `confidence`. With fewer values
    than that needs, min to max, with its (lower) coverage: 5 values give 93.75%."""
    ordered, n = sorted(values), len(values)
    if not n:
        raise ValueError("no values")
    k = 1
    while k < (n + 1) // 2 and _coverage(n, k + 1) >= confidence:
        k += 1
    return ordered[k - 1], ordered[n - k], _coverage(n, k)


def _coverage(n: int, k: int) -> float:
    """P(x(k) <= median <= x(n+1-k)) for n independent draws of a continuous variable."""
    below = sum(math.comb(n, i) for i in range(k))
    return 1 - 2 * below / 2 ** n


def fail(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr)
    sys.exit(2)
