"""Read what decides a Swift cluster's recovery, from the files its daemons run with.

Swift has no daemon that reports its configuration, so each setting is read from the
configuration file a running daemon was started with: the file named on the command line
of its process (`/proc/<pid>/cmdline`, the PID from the inventory's pid file or systemd
unit), read over SSH and parsed as Swift does (an INI file, or a `.conf.d` directory of
them, whose [DEFAULT] section every other section inherits).

- The object replicator of every storage node: `interval` (`run_pause` in old files),
  `concurrency`, `handoffs_first`, `handoff_delete`. A node without an object-replicator
  service in the inventory is read from its object server's file (they normally share it).
- The proxy: `node_timeout`, `error_suppression_limit`, `error_suppression_interval`.
- The object ring's replica count.

An unset option has Swift's default, the same from 2.30 to 2.35 (the sample
configuration files of those releases). A node whose file cannot be read is an error of
the record (the run goes on); nothing on the node is changed.
"""

from __future__ import annotations

import configparser
import shlex
from collections.abc import Iterable

from clusters.access import services
from clusters.access.inventory import Cluster, Service
from clusters.exceptions import ClusterError
from clusters.recovery_settings import Setting, merge
from clusters.swift.admin import SwiftAdmin

# option: (Swift's default, a timer?, other names it is read under)
REPLICATOR = {"interval": ("30", True, ("run_pause",)), "concurrency": ("1", False, ()),
              "handoffs_first": ("false", False, ()),
              "handoff_delete": ("auto", False, ())}
PROXY = {"node_timeout": ("10", True, ()), "error_suppression_limit": ("10", False, ()),
         "error_suppression_interval": ("60", True, ())}
TRUE = frozenset({"true", "1", "yes", "on", "t", "y"})  # swift.common.utils.TRUE_VALUES
BOOLEAN = frozenset({"handoffs_first"})
MAX_CONF_BYTES = 1 << 20


def conf_path(argv: list[str]) -> str | None:
    """The configuration file (or .conf.d directory) on a Swift daemon's command line."""
    for arg in argv[1:]:
        if arg.endswith((".conf", ".conf.d")):
            return arg
    return None


def parse(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # Swift's options are case-sensitive
    parser.read_string(text)
    return parser


def options_of(parser: configparser.ConfigParser, section: str, wanted: dict,
               where: str) -> list[Setting]:
    """The wanted options of one section (with [DEFAULT]'s), each with Swift's default."""
    found = parser[section] if parser.has_section(section) else parser[parser.default_section]
    settings = []
    for option, (default, timer, aliases) in wanted.items():
        value = next((found[name] for name in (option, *aliases) if name in found), None)
        if value is not None and option in BOOLEAN:
            value = "true" if value.strip().lower() in TRUE else "false"
        settings.append(Setting(option, default if value is None else value.strip(), default,
                                where, "default" if value is None else "conf", timer))
    return settings


def read_conf(cluster: Cluster, service: Service) -> tuple[str, str]:
    """(the path, the text) of the configuration a running service was started with."""
    pid = services.pid_of(cluster, service)
    if pid is None:
        raise ClusterError(f"{service.name} is not running: its configuration cannot be read")
    argv = services.run(cluster, service, f"tr '\\0' '\\n' </proc/{int(pid)}/cmdline",
                        timeout=10).stdout.splitlines()
    path = conf_path(argv)
    if path is None:
        raise ClusterError(f"{service.name} (PID {pid}) names no .conf file: {' '.join(argv)}")
    quoted = shlex.quote(path)
    text = services.run(cluster, service, f"if [ -d {quoted} ]; then cat -- {quoted}/*.conf; "
                        f"else cat -- {quoted}; fi | head -c {MAX_CONF_BYTES}",
                        timeout=10).stdout
    return path, text


def _replicators(cluster: Cluster) -> Iterable[Service]:
    """Each storage node's object replicator (else its object server)."""
    for node in cluster.nodes:
        on_node = {s.kind: s for s in cluster.services_on(node.name)}
        service = on_node.get("object-replicator") or on_node.get("object-server")
        if service is not None:
            yield service


def read(cluster: Cluster, admin: SwiftAdmin) -> tuple[list[Setting], str, list[str]]:
    """The settings, the release they were read from and what could not be read."""
    settings: list[Setting] = []
    errors: list[str] = []
    sources = [(s, "object-replicator", REPLICATOR) for s in _replicators(cluster)]
    sources += [(s, "app:proxy-server", PROXY) for s in cluster.services_of_kind("proxy-server")]
    nodes_read = 0
    for service, section, wanted in sources:
        try:
            path, text = read_conf(cluster, service)
            where = f"{service.node}:{path}" if service.node else path
            settings += options_of(parse(text), section, wanted, where)
            nodes_read += wanted is REPLICATOR
        except (ClusterError, OSError, configparser.Error) as exc:
            errors.append(f"{service.name}: {exc}")
    if not any(s.name in PROXY for s in settings) and not errors:
        errors.append("no proxy-server service in the inventory: its timeouts are unknown")
    replicas = admin.ring_facts().replicas.get("object")
    if replicas is not None:
        settings.append(Setting("object ring replicas", f"{replicas:g}", None, "object ring",
                                "ring"))
    merged = merge(settings)
    for setting in merged:
        if setting.name in REPLICATOR and nodes_read > 1:
            setting.where += f" and {nodes_read - 1} other nodes"
    return merged, admin.version() or "", errors
