"""A node starved of CPU: stress-ng busy on the node, bounded by a ceiling and a timeout.

The hog runs in a cgroup of our own under the node's cgroup v1 `cpu` controller,
`faultline-cpuhog-<node>`, whose CFS quota is the ceiling (in cores), so a bug in Faultline
or a forgotten restore cannot take more than that from the node, and stress-ng's own
`--timeout` ends it anyway. It competes with the node's daemons for CPU. On the lab, whose
nodes are network namespaces sharing this machine's CPUs, it starves every node a little
rather than one node a lot: the figures say so. The restore kills what is left in the
cgroup and removes it; `cpu.stat` says how often the ceiling held the hog back.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from clusters.exceptions import InvalidCpuHog

CPU = "/sys/fs/cgroup/cpu"
PERIOD_US = 100_000
MAX_WORKERS, MAX_TIMEOUT_S, MAX_CEILING_CORES = 64, 3600, 256.0


@dataclass(frozen=True)
class CpuHog:
    node: str
    workers: int
    load_percent: int
    ceiling_cores: float
    timeout_s: int

    @property
    def cgroup(self) -> str:
        return cgroup_of(self.node)

    def says(self) -> str:
        return (f"{self.workers} stress-ng CPU worker(s) at {self.load_percent}% on "
                f"{self.node}, at most {self.ceiling_cores:g} core(s), for at most "
                f"{self.timeout_s} s")


def cgroup_of(node: str) -> str:
    return f"{CPU}/faultline-cpuhog-{node}"


def _whole(name: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidCpuHog(f"{name} must be a whole number from {low} to {high}, "
                            f"not {value!r}")
    return value


def cpu_hog(node: str, workers=1, load_percent=100, ceiling_cores=1.0,
            timeout_s=60) -> CpuHog:
    """The hog asked for, checked; InvalidCpuHog with one message otherwise."""
    if isinstance(ceiling_cores, bool) or not isinstance(ceiling_cores, int | float) or \
            not 0.1 <= ceiling_cores <= MAX_CEILING_CORES:
        raise InvalidCpuHog(f"ceiling_cores must be a number from 0.1 to "
                            f"{MAX_CEILING_CORES:g}, not {ceiling_cores!r}")
    return CpuHog(node, _whole("workers", workers, 1, MAX_WORKERS),
                  _whole("load_percent", load_percent, 1, 100), float(ceiling_cores),
                  _whole("timeout_s", timeout_s, 1, MAX_TIMEOUT_S))


def start_command(hog: CpuHog) -> str:
    """Shell: check the node can, make the cgroup with its quota, start stress-ng in it,
    detached from the SSH session; prints the node's CPU count."""
    cg = shlex.quote(hog.cgroup)
    quota = int(hog.ceiling_cores * PERIOD_US)
    inner = (f"echo $$ > {cg}/cgroup.procs && exec stress-ng --cpu {hog.workers} "
             f"--cpu-load {hog.load_percent} --timeout {hog.timeout_s}s --quiet")
    return (
        "command -v stress-ng >/dev/null || { echo 'stress-ng is not installed on the node "
        "(apt-get install stress-ng)' >&2; exit 3; }; "
        f"[ -d {CPU} ] || {{ echo 'no cgroup v1 cpu controller at {CPU}' >&2; exit 3; }}; "
        f"awk -v n=\"$(nproc)\" 'BEGIN {{ exit !(n >= {hog.ceiling_cores:g}) }}' || "
        f"{{ echo \"the ceiling "
        f"({hog.ceiling_cores:g} cores) is more than the node's $(nproc) CPUs\" >&2; exit 3; }}; "
        f"mkdir -p {cg} && echo {PERIOD_US} > {cg}/cpu.cfs_period_us && "
        f"echo {quota} > {cg}/cpu.cfs_quota_us || exit 3; "
        f"setsid sh -c {shlex.quote(inner)} </dev/null >/dev/null 2>&1 & "
        f"for i in 1 2 3 4 5 6 7 8 9 10; do grep -q . {cg}/cgroup.procs && break; sleep 0.2; done; "
        f"grep -q . {cg}/cgroup.procs || {{ echo 'stress-ng did not start' >&2; exit 3; }}; nproc")


def stop_command(node: str) -> str:
    """Shell: kill whatever is left in the hog's cgroup, then remove it (idempotent); prints
    its cpu.stat first."""
    cg = shlex.quote(cgroup_of(node))
    return (f"if [ -d {cg} ]; then cat {cg}/cpu.stat; for i in 1 2 3 4 5 6 7 8 9 10; do "
            f"p=$(cat {cg}/cgroup.procs); [ -z \"$p\" ] && break; kill -9 $p 2>/dev/null; "
            f"sleep 0.2; done; rmdir {cg}; fi")


def parse_cpu_stat(text: str) -> dict[str, float]:
    """cpu.stat -> {"periods": ..., "held_back": periods at the ceiling, "held_back_s": ...}."""
    values = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
    return {"periods": int(values.get("nr_periods", 0)),
            "held_back": int(values.get("nr_throttled", 0)),
            "held_back_s": round(int(values.get("throttled_time", 0)) / 1e9, 1)}
