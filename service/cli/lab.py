"""`faultline lab up|down|status`: the embedded lab, real clusters on this machine.

Two generations: `pacific` (the default: Debian 12's Ceph 16 and Swift 2.30, daemons with
pid files in network namespaces) and `current` (Debian 13's Ceph 18 "reef" and Swift 2.35,
in containers booting systemd, daemons under Debian's units: lab/ceph_reef.py,
lab/swift_current.py); `reef` names the current Ceph lab too. `lab down` without
`--release` takes down every lab."""

from __future__ import annotations

import json

import click

from clusters.polling import PollTimeout, poll_until
from lab import ceph, ceph_reef, swift, swift_current
from lab.teardown import RELEASE_S

from .group import SETUP_ERRORS, fail


@click.group("lab")
def lab_group() -> None:
    """The embedded lab: real clusters on this machine."""


SYSTEMS = ("ceph", "swift")
RELEASES = ("pacific", "current", "reef")
LABS = {("ceph", "pacific"): ceph, ("swift", "pacific"): swift, ("ceph", "reef"): ceph_reef,
        ("ceph", "current"): ceph_reef, ("swift", "current"): swift_current}
RELEASE_OPTION = click.option(
    "--release", type=click.Choice(RELEASES), default=None,
    help="The lab's release: pacific (default), current (Ceph 18, Swift 2.35) or reef "
         "(Ceph 18 only).")


def _label(system: str, release: str) -> str:
    """" (reef)", " (2.35)": the release a lab runs, when it is not the default's."""
    named = getattr(_lab_module(system, release), "RELEASE", None)
    return f" ({named})" if release != "pacific" and named else ""


def _lab_module(system: str, release: str = "pacific"):
    return LABS[(system, release)]


def _systems(system: str, release: str = "pacific") -> tuple[str, ...]:
    """The systems of a release that the command is about ("all": those it has)."""
    if system != "all" and (system, release) not in LABS:
        fail(f"there is no {system} lab on {release} (reef: ceph only; current: both)")
    return tuple(s for s in SYSTEMS if (s, release) in LABS) if system == "all" else (system,)


@lab_group.command("up")
@click.argument("system", type=click.Choice([*SYSTEMS, "all"]), default="all")
@RELEASE_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def lab_up(system: str, release: str | None, as_json: bool) -> None:
    """Start the lab (idempotent): Ceph (HEALTH_OK), Swift (PUT/GET through the proxy), or
    both; write them into the inventory. `--release current`: the Ceph 18 and Swift 2.35
    labs of systemd containers (lab-ceph-reef, lab-swift-current), their root filesystems
    built once if missing; `--release reef`: the Ceph one."""
    release = release or "pacific"
    infos = {name: _lab_module(name, release).up() for name in _systems(system, release)}
    if as_json:
        click.echo(json.dumps(infos, indent=2, default=str))
        return
    for name, info in infos.items():
        if name == "ceph":
            state = info["state"]
            click.echo(f"{info['cluster']} is up ({info['mode']} start, HEALTH_OK after "
                       f"{info['seconds_to_health_ok']} s): {state['num_up_osds']}/"
                       f"{state['num_osds']} OSDs up, {state['num_pgs']} PGs active+clean")
        else:
            click.echo(f"{info['cluster']} is up ({info['mode']} start, first PUT/GET through "
                       f"the proxy after {info['seconds_to_first_put_get']} s): "
                       f"{info['auth_url']}")
        click.echo(f"inventory: {info['inventory']}")


@lab_group.command("down")
@click.argument("system", type=click.Choice([*SYSTEMS, "all"]), default="all")
@RELEASE_OPTION
@click.option("--purge", is_flag=True, help="Also delete the lab's data.")
def lab_down(system: str, release: str | None, purge: bool) -> None:
    """Stop the lab and remove every process, container, mount, loop device, cgroup and
    namespace; both releases unless `--release` names one."""
    problems = []
    labs = [(name, rel) for rel in ([release] if release else ("pacific", "current"))
            for name in _systems(system if release else "all", rel)
            if system in ("all", name)]
    results = {}
    for name, rel in labs:  # every lab goes down, whatever happened to the others
        try:
            results[name, rel] = _lab_module(name, rel).down(purge=purge)
        except SETUP_ERRORS as exc:
            problems.append(f"the {name} lab could not be taken down: {exc}")
    for (name, rel), result in results.items():
        left = _left_after_all(_lab_module(name, rel), result["leftovers"])
        if left:
            problems.append(f"the {name} lab left things behind: {left}")
            continue
        click.echo(f"{name} lab{_label(name, rel)} down in "
                   f"{result['seconds']} s"
                   f"{', data purged' if purge else ''}; nothing left behind")
    if problems:
        fail("; ".join(problems))


def _left_after_all(module, left: dict[str, list]) -> dict[str, list]:
    """What a lab left, looked at again once every lab is down: a container lab booted
    while another lab's disks were mounted holds those filesystems (in a copy of the
    machine's mounts no process shows) until its containers stop, so the other lab's loop
    devices are freed only then (seen: the Reef lab's four, held by the current Swift lab's
    nodes, gone a second after they stopped)."""
    left = {kind: items for kind, items in left.items() if items}
    if set(left) != {"loop_devices"}:
        return left
    try:
        poll_until("the lab's loop devices to be freed",
                   lambda: not module.leftovers()["loop_devices"], RELEASE_S, 0.5)
    except PollTimeout:
        pass
    return {kind: items for kind, items in module.leftovers().items() if items}


@lab_group.command("status")
@click.argument("system", type=click.Choice([*SYSTEMS, "all"]), default="all")
@RELEASE_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def lab_status(system: str, release: str | None, as_json: bool) -> None:
    """Show the lab's daemons, disks and health; a daemon that is down says so."""
    release = release or "pacific"
    statuses = {name: _lab_module(name, release).status()
                for name in _systems(system, release)}
    if as_json:
        click.echo(json.dumps(statuses, indent=2, default=str))
        return
    for name, status in statuses.items():
        click.echo(f"{name} lab ({status['home']}):")
        for daemon_name, daemon in status["daemons"].items():
            if daemon["alive"]:
                click.echo(f"  {daemon_name:<28} running  pid {daemon['pid']:<8} "
                           f"rss {(daemon['rss_bytes'] or 0) // 2**20} MiB")
            else:
                click.echo(f"  {daemon_name:<28} DOWN")
        for mount, mounted in status["mounts"].items():
            click.echo(f"  disk {mount}: {'mounted' if mounted else 'NOT MOUNTED'}")
        if name == "swift":
            click.echo(f"  proxy healthcheck: {'OK' if status['proxy_healthcheck'] else 'FAIL'}")
            continue
        health = status.get("health")
        if health is None:
            click.echo("  cluster: monitor not running")
        elif "error" in health:
            click.echo(f"  cluster: {health['error']}")
        else:
            click.echo(f"  cluster: {health['summary']}")


