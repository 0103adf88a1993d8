"""The "Last figures" table of bench/README.md, from bench/results/summary.json: every row of
every benchmark, with the commit and the time it was measured at. Reads; changes nothing.

    .venv/bin/python -m bench.summary_table
"""

from __future__ import annotations

import json

from .run_all import RESULTS

VERDICT = {True: "met", False: "**not met**", None: "n/a"}


def _number(value: float | None, unit: str = "") -> str:
    return "" if value is None else f"{value:,.3f}{(' ' + unit) if unit else ''}"


def table(summary: dict) -> str:
    lines = [f"Machine: {summary['machine']['cpus']} CPUs, {summary['machine']['platform']}, "
             f"Python {summary['machine']['python']}.", "",
             "| id | what | Faultline | reference | ratio | target | verdict | commit, measured |",
             "|---|---|---|---|---|---|---|---|"]
    for name, entry in summary["benchmarks"].items():
        when = f"{entry.get('commit')}, {entry.get('started')}"
        if entry.get("exit"):
            lines.append(f"| {name} | the benchmark itself failed (exit {entry['exit']}) "
                         f"|  |  |  |  |  | {when} |")
        for row in entry["rows"]:
            reference = _number(row.get("reference"), row["unit"])
            if reference and row.get("reference_name"):
                reference = f"{row['reference_name']} {reference}"
            gap = f" ({row['gap']})" if row.get("gap") else ""
            lines.append(f"| {row['id']} | {row['what']} | {_number(row['value'], row['unit'])} "
                         f"| {reference} | {_number(row.get('ratio'))} | {row['target']} "
                         f"| {VERDICT[row['met']]}{gap} | {when} |")
    return "\n".join(lines)


def main() -> None:
    print(table(json.loads((RESULTS / "summary.json").read_text())))


if __name__ == "__main__":
    main()
