"""The blast-radius judgement: would a fault leave data unavailable or on its last copy?

Pure logic over placement facts (clusters/safety/placement.py gathers them, clusters/safety/guard.py
ties the two together). What is already down counts: faults stack.

- Ceph: after the fault, a PG whose acting OSDs still up number fewer than the pool's
  min_size is inactive (I/O blocks); one with a single copy left (size >= 2) is unsafe:
  one more failure loses data. Either refuses the fault.
- Swift: a partition must keep its write quorum (replicas // 2 + 1) of primaries up,
  which also rules out a last copy when there are 3 replicas.

Only the PGs / partitions the fault touches (a copy on something it newly takes down)
decide; trouble that was already there is reported, not held against the fault.
Swift devices are keyed "<ring>:<node>/<device>", e.g. "object:node1/d1": the server of
that ring on that node, on that device. A dead node or an unmounted device is the three
keys of its rings (clusters/safety/guard.py has the helpers that build them).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

CRUSH_ITEM_NONE = 2147483647  # a hole in an acting set (erasure-coded pools)
HINT = "set allow_unavailable: true to inject anyway"


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    what: str  # the fault, e.g. "power off zone zone2 (osd.2)"
    reasoning: tuple[str, ...]  # lines a human reads, the decisive one first

    def message(self) -> str:
        text = f"{'allowed' if self.allowed else 'refused'}: {self.what}: " \
               + "; ".join(self.reasoning)
        return text if self.allowed else f"{text} ({HINT})"

    def as_dict(self) -> dict[str, Any]:
        return {"allowed": self.allowed, "what": self.what,
                "reasoning": list(self.reasoning), "message": self.message()}


@dataclass(frozen=True)
class CephPool:
    id: int
    name: str
    size: int
    min_size: int
    failure_domain: str | None  # CRUSH type of the rule's (last) choose step: "host", "zone"


@dataclass(frozen=True)
class CephPlacement:
    pools: tuple[CephPool, ...]
    pgs: tuple[tuple[str, int, tuple[int, ...]], ...]  # (pgid, pool id, acting OSD ids)
    osd_domains: dict[int, dict[str, str]]  # osd -> {"host": "node1", "zone": "zone1"}
    down: frozenset[int]  # OSDs down right now


@dataclass(frozen=True)
class SwiftRingPlacement:
    ring: str  # "object", "container", "account"
    replicas: int
    assignments: tuple[tuple[str, ...], ...]  # per partition: its primaries' "node/device"
    device_zones: dict[str, int]  # "node1/d1" -> zone


@dataclass(frozen=True)
class _Spread:
    """A pool or a ring: groups of copies (PGs, partitions) placed by one rule."""

    title: str  # "pool faultline", "object ring"
    rule: str  # "size 3, min_size 2, failure domain zone"
    unit: str  # "PG", "partition"
    size: int  # copies of each group
    keep: int  # a group keeping fewer copies than this is refused
    floor: int  # fewer copies than this: no I/O (Ceph min_size, Swift write quorum)
    tolerates: int  # copies (one per failure domain) that may go
    domain_kind: str  # "zone"
    domain_of: Callable[[Hashable], str]
    members: frozenset  # everything it places copies on
    shortfall: str  # template with {below} {inactive} {total} {one} {unit}
    groups: tuple[tuple[str, tuple[Hashable, ...]], ...]  # (group id, copies)


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _judge(spreads: list[_Spread], down: set, taking: set, what: str,
           label: Callable[[Hashable], str]) -> Verdict:
    new, after = taking - down, down | taking
    notes = ["already down: " + (", ".join(sorted(map(label, down))) or "nothing")]
    refused, fine = [], []
    for spread in spreads:
        touched, before = [], 0
        for gid, copies in spread.groups:
            left = [c for c in copies if c not in after]
            if new.intersection(copies):
                touched.append((len(left), gid, copies, left))
            elif sum(1 for c in copies if c not in down) < spread.keep:
                before += 1
        if before:
            notes.append(f"already before this fault: {_plural(before, spread.unit)} of "
                         f"{spread.title} kept fewer than {spread.keep} copies")
        bad = [t for t in touched if t[0] < spread.keep]
        if bad:
            refused.append((spread, bad))
        elif touched:
            fine.append((spread, touched))
    if refused:
        refused.sort(key=lambda r: (-len(r[1]), r[0].title))
        spread, bad = refused[0]
        lines = [_domain_line(spread, after, label), _shortfall_line(spread, bad, label)]
        if len(refused) > 1:
            lines.append("also " + ", ".join(f"{s.title} ({len(b)} of {len(s.groups)} "
                                             f"{s.unit}s)" for s, b in refused[1:]))
        return Verdict(False, what, (*lines, *notes))
    if not fine:
        first = (f"no copy of any data is on {', '.join(sorted(map(label, new)))}" if new
                 else "all of it is already down: this fault takes nothing more down"
                 if taking else "this fault takes down nothing that holds data")
        return Verdict(True, what, (first, *notes))
    keeps: dict[tuple[int, int], list[str]] = {}
    for spread, touched in fine:
        keeps.setdefault((min(t[0] for t in touched), spread.size), []).append(spread.title)
    lines = [f"every {fine[0][0].unit} keeps >= {k} of {n} copies"
             + (f" ({', '.join(titles)})" if len(keeps) > 1 else "")
             for (k, n), titles in sorted(keeps.items())]
    main = max(fine, key=lambda f: len(f[0].groups))[0]
    return Verdict(True, what, (*lines, _domain_line(main, after, label), *notes))


def _domain_line(spread: _Spread, after: set, label: Callable[[Hashable], str]) -> str:
    by_domain: dict[str, set] = {}
    for member in spread.members:
        by_domain.setdefault(spread.domain_of(member), set()).add(member)
    shown = []
    for domain in sorted({spread.domain_of(m) for m in after & spread.members}):
        gone = by_domain[domain] & after
        shown.append(domain if gone == by_domain[domain] else
                     f"{domain} (partly: {', '.join(sorted(map(label, gone)))})")
    may = (f"at most {_plural(spread.tolerates, spread.domain_kind)} may be down"
           if spread.tolerates > 0 else f"no {spread.domain_kind} may be down")
    return (f"{spread.title}: {spread.rule}: {may}, this fault would leave "
            f"{_names(shown) if shown else 'nothing'} down")


def _shortfall_line(spread: _Spread, bad: list, label: Callable[[Hashable], str]) -> str:
    _, gid, copies, left = min(bad, key=lambda t: t[0])
    counts = spread.shortfall.format(
        below=len(bad), inactive=sum(1 for t in bad if t[0] < spread.floor),
        total=len(spread.groups), one=sum(1 for t in bad if t[0] <= 1), unit=spread.unit)
    keeps = f"only {', '.join(map(label, left))}" if left else "none"
    return (f"{spread.title}: {counts}; e.g. {spread.unit} {gid} on "
            f"{', '.join(map(label, copies))} would keep {keeps}")


def ceph_verdict(placement: CephPlacement, taking: set[int], what: str) -> Verdict:
    """Judge taking down the OSDs `taking` on top of those already down."""
    groups: dict[int, list] = {p.id: [] for p in placement.pools}
    for pgid, pool_id, acting in placement.pgs:
        if pool_id in groups:
            groups[pool_id].append((pgid, tuple(o for o in acting if o != CRUSH_ITEM_NONE)))
    osds = frozenset(placement.osd_domains) | placement.down | frozenset(taking)

    def spread(pool: CephPool) -> _Spread:
        kind = pool.failure_domain or "osd"
        keep = max(pool.min_size, 2 if pool.size >= 2 else 1)

        def domain_of(osd: Hashable) -> str:
            return placement.osd_domains.get(osd, {}).get(kind) or f"osd.{osd}"
        return _Spread(
            title=f"pool {pool.name}", unit="PG", size=pool.size, keep=keep, floor=pool.min_size,
            rule=f"size {pool.size}, min_size {pool.min_size}, failure domain "
                 f"{pool.failure_domain or 'unknown'}",
            tolerates=max(0, pool.size - keep), domain_kind=kind, domain_of=domain_of,
            members=osds, groups=tuple(groups[pool.id]),
            shortfall="{inactive} of {total} {unit}s would be inactive (fewer than "
                      f"min_size {pool.min_size} copies), " "{one} at one copy or none")
    return _judge([spread(p) for p in sorted(placement.pools, key=lambda p: p.id)],
                  set(placement.down), set(taking), what, lambda osd: f"osd.{osd}")


def swift_verdict(rings: list[SwiftRingPlacement], down: set[str], taking: set[str],
                  what: str) -> Verdict:
    """Judge taking down the "<ring>:<node>/<device>" keys `taking` on top of `down`."""
    def spread(ring: SwiftRingPlacement) -> _Spread:
        quorum = ring.replicas // 2 + 1
        prefix = f"{ring.ring}:"

        def domain_of(key: Hashable) -> str:
            zone = ring.device_zones.get(str(key).removeprefix(prefix))
            return str(key) if zone is None else f"zone {zone}"
        return _Spread(
            title=f"{ring.ring} ring", unit="partition", size=ring.replicas,
            keep=quorum, floor=quorum,
            rule=f"{_plural(ring.replicas, 'replica')}, write quorum {quorum}, zones "
                 f"{', '.join(map(str, sorted(set(ring.device_zones.values())))) or 'none'}",
            tolerates=max(0, ring.replicas - quorum), domain_kind="zone",
            domain_of=domain_of,
            members=frozenset(prefix + d for d in ring.device_zones),
            groups=tuple((str(part), tuple(prefix + d for d in devices))
                         for part, devices in enumerate(ring.assignments)),
            shortfall="{below} of {total} {unit}s would keep fewer than the write quorum "
                      f"of {quorum} copies, " "{one} at one copy or none")
    return _judge([spread(r) for r in rings], set(down), set(taking), what, str)
