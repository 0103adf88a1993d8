"""The verdict of each outcome figure between two groups of trials (docs/statistics.md). Pure.

Per figure: a two-sided exact rank test (service.results.ranks) on the trials that saw the
fault, a trial that never got there (never recovered, never detected) ranked worse than
every measured one; the Hodges-Lehmann shift with its exact 95% interval when nothing is
censored; Fisher's exact test on how many trials never got there, and on how many saw no
disruption at all (its own outcome, never 0 s). Holm's correction holds the chance of any
false "different" in one comparison at most ALPHA. Three outcomes:
- "different": the Holm-adjusted p-value is at most ALPHA; the line gives the shift and
  its interval, or the counts;
- "no meaningful difference": not different, and the 95% interval of the shift lies
  inside the figure's margin (MARGINS);
- "cannot tell": neither; the line says how many trials per side would be needed.
Settings and inputs (the offered rate, the restore time, the baseline) are never judged.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Literal

from .analysis import NO_DISRUPTION
from .figure_definitions import BY_KEY, MARGINS
from .formatting import format_value, label_of
from .ranks import ALPHA, fisher, holm, midranks, rank_test, shift, smallest_p, trials_needed

# the outcome figures, the only ones judged, and the margin inside which a difference is
# not meaningful, in the figure's own unit (fractions: 0.05 is 5 points), as
# service.results.figure_definitions gives them
OUTCOMES = tuple(MARGINS)
COUNTS = tuple(k for k in OUTCOMES if BY_KEY[k].count)

# a time that was never reached is right-censored at the end of what the run observed:
# (the words for it, where its observation window ends)
Window = Literal["run", "restore", "after restore"]
NEVER: dict[str, tuple[str, Window]] = {
    "time_to_detect_s": ("never detected", "run"),
    "time_to_client_recovery_s": ("never recovered", "run"),
    "time_to_full_redundancy_s": ("never fully redundant while the fault persisted", "restore"),
    "time_to_full_redundancy_after_restore_s": ("never fully redundant after the restore",
                                                "after restore"),
    "time_to_alert_s": ("never alerted", "run"),
}
# the figures' own reasons (service.results.analysis, figures) for a time never reached
NEVER_REASONS = ("never", "not fully redundant", "no alert about")


def _words(key: str) -> tuple[str, str]:
    """How a larger and a smaller value of the figure read."""
    if key.startswith("time_to_"):
        return "later", "sooner"
    if key in COUNTS:
        return "more", "fewer"
    if key in ("data_at_risk_s", "deficit_s"):
        return "longer", "shorter"
    return "higher", "lower"


Kind = Literal["measured", "never", "no disruption", "missing"]
METHOD = ("Method: per outcome figure, a two-sided exact rank test (Mann-Whitney; a trial "
          "that never got there ranks worst, as in Gehan's test), the Hodges-Lehmann shift "
          "with its exact 95% interval, Fisher's exact test on how many trials never got "
          "there or saw no disruption, and Holm's correction across the tests of the "
          "comparison (docs/statistics.md).")


@dataclass(frozen=True)
class Observed:
    """One trial's figure: measured, never reached (censored at `bound`, None if the run
    did not say how long it watched), no disruption, or missing (not measured: `reason`)."""

    kind: Kind
    value: float | None = None
    bound: float | None = None
    reason: str | None = None

    @property
    def key(self) -> tuple[int, float]:
        """How it ranks: a trial that never got there above (worse than) every measured."""
        return (1, 0.0) if self.kind == "never" else (0, float(self.value))


def observe(key: str, entry: dict[str, Any]) -> Observed:
    """What one run (a report entry) says of one figure."""
    value = entry.get(key)
    reason = (entry.get("reasons") or {}).get(key)
    if key == "capacity_change":  # a scale run's, beside its two calibrations
        capacity = entry.get("capacity") or {}
        value, reason = capacity.get("change"), capacity.get("reason")
    if value is not None:
        return Observed("measured", float(value))
    if reason and NO_DISRUPTION in reason:
        return Observed("no disruption", reason=reason)
    if key in NEVER and reason and any(word in reason for word in NEVER_REASONS):
        return Observed("never", bound=_bound(NEVER[key][1], entry), reason=reason)
    return Observed("missing", reason=reason or "not measured")


def _bound(window: Window, entry: dict[str, Any]) -> float | None:
    observed, restore = entry.get("observed_s"), entry.get("restore_at_s")
    if window == "restore":
        return restore if restore is not None else observed
    if window == "after restore":
        return None if observed is None or restore is None else observed - restore
    return observed


@dataclass(frozen=True)
class _Test:
    key: str
    what: Literal["ranks", "never", "no disruption"]
    p: float


def tests_of(key: str, a: list[Observed], b: list[Observed]) -> list[_Test]:
    """The tests of one figure between two groups' observations."""
    tests = []
    seen_a = [o for o in a if o.kind in ("measured", "never")]
    seen_b = [o for o in b if o.kind in ("measured", "never")]
    # a test whose pooled trials are all alike gives p = 1 under every split: it can never
    # reject, so it takes no place in Holm's count (which stays exact without it)
    if seen_a and seen_b and len({o.key for o in seen_a + seen_b}) > 1:
        tests.append(_Test(key, "ranks", rank_test([o.key for o in seen_a],
                                                   [o.key for o in seen_b])))
    for what, among in (("never", ("measured", "never")),
                        ("no disruption", ("measured", "never", "no disruption"))):
        pooled = [o for o in a + b if o.kind in among]
        if any(o.kind == what for o in pooled) and any(o.kind != what for o in pooled):
            n1 = sum(o.kind in among for o in a)
            n2 = sum(o.kind in among for o in b)
            tests.append(_Test(key, what, fisher(sum(o.kind == what for o in a), n1,
                                                 sum(o.kind == what for o in b), n2)))
    return tests


def compare_groups(observed: dict[str, tuple[list[Observed], list[Observed]]],
                   names: tuple[str, str], fmt=format_value) -> dict[str, Any]:
    """Every outcome figure's verdict between two groups: `observed[key]` holds each group's
    trials (those that entered), `names` the groups' names in the lines."""
    fmt = _whole(fmt)
    keys = [k for k in OUTCOMES if k in observed
            and any(o.kind != "missing" for side in observed[k] for o in side)]
    tests = [t for k in keys for t in tests_of(k, *observed[k])]
    adjusted = holm([t.p for t in tests])
    by_key: dict[str, list[tuple[_Test, float]]] = {}
    for t, p in zip(tests, adjusted, strict=True):
        by_key.setdefault(t.key, []).append((t, p))
    figures = {k: _figure(k, observed[k], by_key.get(k, []), len(tests), names, fmt)
               for k in keys}
    return {"figures": figures, "tests": len(tests), "method": METHOD,
            "chance": chance_line(len(tests))}


def _whole(fmt):
    """A count (errors, objects, operations) written as a whole number when it is one."""
    def write(key: str, value: float) -> str:
        whole = key in COUNTS and float(value).is_integer()
        return fmt(key, int(value) if whole else value)
    return write


def _tests(n: int) -> str:
    return "1 test" if n == 1 else f"{n} tests"


def chance_line(tests: int) -> str:
    """How many "different" lines chance alone would give, said correctly for Holm."""
    if tests == 0:
        return "No outcome figure could be tested."
    among = "from this one test" if tests == 1 else f"among these {_tests(tests)}"
    return (f"Chance alone: where nothing differs, the chance of one or more false "
            f"'different' lines {among} is at most {ALPHA:.0%} (Holm), so "
            f"of 20 such comparisons of identical conditions at most 1 is expected to show "
            f"any; a test at the edge of its power shows fewer.")


def _figure(key: str, sides: tuple[list[Observed], list[Observed]],
            tests: list[tuple[_Test, float]], family: int, names: tuple[str, str],
            fmt) -> dict[str, Any]:
    a, b = sides
    out: dict[str, Any] = {"verdict": "cannot tell", "p": None, "p_holm": None,
                           "shift": None, "low": None, "high": None,
                           "margin": MARGINS[key], "needed_per_side": None, "rank_shift": None,
                           "counts": [_counts(key, a, fmt), _counts(key, b, fmt)]}
    label = label_of(key)
    ranks = next(((t, p) for t, p in tests if t.what == "ranks"), None)
    found = [(t, p) for t, p in tests if p <= ALPHA]
    measured_a = [o.value for o in a if o.kind == "measured"]
    measured_b = [o.value for o in b if o.kind == "measured"]
    censored = any(o.kind == "never" for o in a + b)
    if ranks is not None:
        out["p"], out["p_holm"] = round(ranks[0].p, 6), round(ranks[1], 6)
        seen = [o.key for o in a + b if o.kind in ("measured", "never")]
        r = midranks(seen)
        n_a = sum(o.kind in ("measured", "never") for o in a)
        out["rank_shift"] = sum(r[n_a:]) / (len(r) - n_a) - sum(r[:n_a]) / n_a
    if measured_a and measured_b and not censored:
        est, low, high = shift(measured_a, measured_b)
        out["shift"], out["low"], out["high"] = est, low, high
    counts = f"{names[0]}: {out['counts'][0]}; {names[1]}: {out['counts'][1]}"
    if found:
        out["verdict"] = "different"
        out["text"] = f"{label}: different: " + "; ".join(
            _found(t, p, key, names, out, fmt) for t, p in found) + f". {counts}"
        return out
    low, high, margin = out["low"], out["high"], MARGINS[key]
    calm = [sum(o.kind == "no disruption" for o in side) for side in sides]
    # the times say nothing of trials with no disruption: only alike counts let them agree
    if low is not None and -margin <= low and high <= margin and calm[0] == calm[1]:
        out["verdict"] = "no meaningful difference"
        out["text"] = (f"{label}: no meaningful difference: {names[1]} against {names[0]} "
                       f"{_signed(out['shift'], key, fmt)} [{_signed(low, key, fmt)} to "
                       f"{_signed(high, key, fmt)}], inside the margin of "
                       f"{fmt(key, margin)}. {counts}")
        return out
    need, why = _needed(key, sides, family, low, high, fmt)
    out["needed_per_side"] = need
    out["text"] = f"{label}: cannot tell: {why}. {counts}"
    return out


def _found(t: _Test, p: float, key: str, names: tuple[str, str], out: dict[str, Any],
           fmt) -> str:
    if t.what == "ranks" and out["shift"] is not None and out["low"] is not None:
        worse, better = _words(key)
        word = worse if out["shift"] > 0 else better
        return (f"{names[1]} {fmt(key, abs(out['shift']))} {word} than {names[0]} "
                f"[{_signed(out['low'], key, fmt)} to {_signed(out['high'], key, fmt)}], "
                f"p {p:.3g} after Holm")
    if t.what == "ranks":
        worse, better = _words(key)
        word = worse if out["rank_shift"] > 0 else better
        return (f"{names[1]}'s trials rank {word} than {names[0]}'s (no size: some never got "
                f"there), p {p:.3g} after Holm")
    what = NEVER[key][0] if t.what == "never" else "saw no disruption"
    return f"how many trials {what} differs, p {p:.3g} after Holm"


def _signed(value: float, key: str, fmt) -> str:
    return ("+" if value > 0 else "-" if value < 0 else "") + fmt(key, abs(value))


def _counts(key: str, trials: list[Observed], fmt) -> str:
    """A group's trials of one figure in words: "3 measured, 1 of 4 never recovered
    (> 120 s)"; missing ones with their reason."""
    n = len(trials)
    values = sorted(o.value for o in trials if o.kind == "measured")
    parts = [f"{len(values)} of {n} measured" if len(values) < n else f"{n} measured"]
    if values:
        parts[0] = fmt(key, statistics.median(values)) + (
            f" [{fmt(key, values[0])} to {fmt(key, values[-1])}]" if len(values) > 1
            else "") + f" ({parts[0]})"
    never = [o for o in trials if o.kind == "never"]
    if never:
        bounds = [o.bound for o in never if o.bound is not None]
        over = f" (> {fmt(key, min(bounds))})" if bounds else ""
        parts.append(f"{len(never)} of {n} {NEVER[key][0]}{over}")
    calm = sum(o.kind == "no disruption" for o in trials)
    if calm:
        parts.append(f"{calm} of {n} with no disruption")
    missing = [o for o in trials if o.kind == "missing"]
    if missing:
        parts.append(f"{len(missing)} of {n} n/a: {missing[0].reason}")
    return ", ".join(parts)


def _needed(key: str, sides: tuple[list[Observed], list[Observed]], family: int,
            low: float | None, high: float | None, fmt) -> tuple[int | None, str]:
    """How many trials per side a verdict would need, and the words for it."""
    seen = [sum(o.kind in ("measured", "never") for o in side) for side in sides]
    test_n = trials_needed(ALPHA / max(family, 1))
    interval_n = trials_needed(ALPHA)
    if min(seen) == 0:
        return test_n, f"no trial measured it on one side; at least {test_n} per side"
    first = ALPHA / max(family, 1)
    if smallest_p(*seen) > first:
        # Holm's first step asks ALPHA / tests of the smallest p; later steps ask less
        return test_n, (f"too few trials ({seen[0]} vs {seen[1]}): the exact test's "
                        f"smallest p-value is {smallest_p(*seen):.3g}, and Holm over "
                        f"{_tests(family)} asks {first:.3g} of the first; {test_n} per side "
                        f"can reach it (a 95% interval needs {interval_n} per side)")
    if low is None:
        return None, ("not different, and trials that never got there leave the size of the "
                      "difference unknown" if any(o.kind == "never" for s in sides for o in s)
                      else f"no 95% interval under {interval_n} per side")
    margin, width, n = MARGINS[key], high - low, min(seen)
    if margin == 0:
        return None, ("not different, and its margin is 0: only identical trials show no "
                      "meaningful difference")
    # an interval's width shrinks as 1/sqrt(n): the n at which it would fit the margin
    need = max(n + 1, math.ceil(n * (width / (2 * margin)) ** 2))
    more = f"about {need}" if need <= 50 else "more than 50"
    return need, (f"not different, and the 95% interval is {fmt(key, width)} wide, wider "
                  f"than the margin allows (+-{fmt(key, margin)}): {more} trials per side "
                  "would narrow it")
