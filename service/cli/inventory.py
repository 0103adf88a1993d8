"""`faultline inventory discover ceph|swift`: draft an inventory from what a running cluster
already knows, for a person to review (clusters/discovery). What no cluster map holds
(SSH access, how daemons are supervised, Swift's mount points) can be given as options;
whatever is not given is marked TODO in the file."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import click

from clusters.discovery import (
    CephSource,
    DraftCluster,
    Reach,
    SwiftSource,
    discover_ceph,
    discover_swift,
    inventory_text,
)

from .group import fail


@click.group("inventory")
def inventory_group() -> None:
    """Inventory files: draft one from a running cluster."""


@inventory_group.group("discover")
def discover_group() -> None:
    """Draft a commented inventory of a Ceph or Swift cluster (review its TODOs)."""


def _reach_options(command):
    """The options shared by both systems: output, SSH access, daemon management."""
    options = [
        click.option("--cluster", "name", help="The cluster's name in the inventory "
                     "(default: discovered-ceph / discovered-swift)."),
        click.option("--output", "-o", type=click.Path(dir_okay=False),
                     help="Write the inventory to FILE instead of standard output."),
        click.option("--force", is_flag=True, help="Overwrite FILE if it exists."),
        click.option("--ssh-user", help="SSH user on every node."),
        click.option("--ssh-port", type=int, help="SSH port on every node."),
        click.option("--ssh-key", type=click.Path(exists=True, dir_okay=False),
                     help="Path of the SSH private key (only the path is written)."),
        click.option("--known-hosts", type=click.Path(exists=True, dir_okay=False),
                     help="Path of the known_hosts file with the nodes' host keys."),
        click.option("--unit", help="systemd unit of each daemon, a template such as "
                     "'ceph-osd@{id}' (fields: name kind id entity node program fsid)."),
        click.option("--pid-file", help="pid file of each daemon, a template such as "
                     "'/run/ceph/ceph-{entity}.pid'; needs --start."),
        click.option("--start", help="command that starts a daemon again, a template."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _reach(options: dict, **disk_paths: str | None) -> Reach:
    return Reach(ssh_user=options["ssh_user"], ssh_port=options["ssh_port"],
                 ssh_key=_absolute(options["ssh_key"]),
                 known_hosts=_absolute(options["known_hosts"]), unit=options["unit"],
                 pid_file=options["pid_file"], start=options["start"], **disk_paths)


def _absolute(path: str | None) -> str | None:
    return str(Path(path).expanduser().resolve()) if path else None


def _refuse_overwrite(command):
    """Check --output before discovery asks anything: an existing file stays untouched."""
    @functools.wraps(command)
    def checked(**options):
        output = options.get("output")
        if output and Path(output).exists() and not options.get("force"):
            fail(f"{output} exists; give --force to overwrite it")
        if output and not Path(output).expanduser().parent.is_dir():
            fail(f"the directory of {output} does not exist")
        return command(**options)
    return checked


def _write(draft: DraftCluster, output: str | None) -> None:
    text = inventory_text(draft, click.get_current_context().command_path)
    summary = (f"{len(draft.nodes)} nodes, {len(draft.disks)} disks, "
               f"{len(draft.services)} services; {draft.todo_count()} thing(s) to review "
               f"are marked TODO")
    if not output:
        click.echo(text, nl=False)
        click.echo(f"discovered {draft.name}: {summary}", err=True)
        return
    path = Path(output)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        fail(f"cannot write {path}: {exc.strerror or exc}")
    click.echo(f"wrote {path}: {summary}", err=True)


@discover_group.command("ceph")
@click.option("--mon", "mon_host", help="Address of a monitor (or several, comma-separated).")
@click.option("--conf", type=click.Path(), help="A ceph.conf naming the monitors; written as "
              "client.conf.")
@click.option("--keyring", type=click.Path(), help="Keyring path (only the path is written).")
@click.option("--id", "client_id", help="Ceph client id of the keyring (default: admin).")
@click.option("--pool", default="faultline", show_default=True,
              help="The pool the load uses (client.pool).")
@click.option("--zone-type", help="CRUSH bucket type that is a zone (rack, row, zone, ...; "
              "default: the bucket right above each host).")
@click.option("--timeout", type=click.FloatRange(1, 300), default=10, show_default=True,
              help="Seconds to wait for the monitors.")
@_reach_options
@_refuse_overwrite
def discover_ceph_cmd(mon_host, conf, keyring, client_id, pool, zone_type, timeout,
                      **options) -> None:
    """Read the monitors' maps: CRUSH hosts and zones, OSDs with their devices, monitors,
    managers, RGW gateways and, under cephadm, each daemon's unit."""
    draft = discover_ceph(CephSource(conf=conf, mon_host=mon_host, keyring=keyring, pool=pool),
                          _reach(options), options["name"] or "discovered-ceph",
                          client_id=client_id, zone_type=zone_type, timeout_s=timeout)
    _write(draft, options["output"])


@discover_group.command("swift")
@click.argument("rings", nargs=-1, required=True, type=click.Path())
@click.option("--swift-conf", type=click.Path(exists=True, dir_okay=False),
              help="swift.conf (default: the one beside the rings, if any).")
@click.option("--auth-url", help="The proxy's auth URL (client.auth_url).")
@click.option("--user", help="The Swift user (client.user).")
@click.option("--key-file", type=click.Path(), help="Path of the user's key (written as a "
              "path, never read).")
@click.option("--key-env", help="Name of the variable holding the user's key.")
@click.option("--mount", help="Where each ring device is mounted, a template over {node} "
              "and {device} (default /srv/node/{device}, marked TODO).")
@click.option("--block-device", help="The block device (or image) under each mount, a "
              "template over {node} and {device}.")
@_reach_options
@_refuse_overwrite
def discover_swift_cmd(rings, swift_conf, auth_url, user, key_file, key_env, mount,
                       block_device, **options) -> None:
    """Read ring files (or directories of them) with Swift's own ring reader: devices,
    regions and zones, IPs and ports, and the servers each node runs."""
    if key_file and key_env:
        fail("--key-file and --key-env exclude each other; give one")
    source = SwiftSource(swift_dir="", swift_conf=swift_conf, auth_url=auth_url, user=user,
                         key_file=key_file, key_env=key_env)
    draft = discover_swift(list(rings), source, _reach(options, mount=mount,
                                                       block_device=block_device),
                           options["name"] or "discovered-swift")
    _write(draft, options["output"])
