"""Chaos Toolkit actions: faults and the restore of each.

`discover` is the Chaos Toolkit extension entry point for the `faultline`
distribution (`chaos discover faultline`): chaoslib imports this package, the
first top-level package of the distribution, and calls it.
"""

from importlib.metadata import version

from chaoslib.discovery.discover import (
    discover_actions,
    discover_probes,
    initialize_discovery_result,
)

ACTION_MODULES = ("actions.ceph", "actions.swift", "actions.disk", "actions.power",
                  "actions.network", "actions.fill", "actions.ceph_scale", "actions.cpu",
                  "actions.corrupt", "actions.throttle", "actions.memory",
                  "actions.recovery_tuning")
PROBE_MODULES = ("probes.ceph", "probes.swift")


def discover(discover_system: bool = True) -> dict:
    """List Faultline's actions and probes (no target system discovery)."""
    discovery = initialize_discovery_result("faultline", version("faultline"), "storage")
    for module in ACTION_MODULES:
        discovery["activities"].extend(discover_actions(module))
    for module in PROBE_MODULES:
        discovery["activities"].extend(discover_probes(module))
    return discovery
