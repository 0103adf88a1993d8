"""`faultline inventory discover`: draft an inventory from what a cluster already knows
(Ceph's monitors, Swift's rings), commented with where each entry came from and marked
TODO where a person must fill in what no cluster map holds (SSH access, BMCs, how daemons
are supervised). The output loads with clusters.access.inventory unchanged."""

from clusters.discovery.ceph import CephSource
from clusters.discovery.discover import discover_ceph, discover_swift
from clusters.discovery.draft import TODO, DraftCluster, Entry
from clusters.discovery.reach import Reach
from clusters.discovery.render import inventory_text
from clusters.discovery.swift import SwiftSource

__all__ = ["TODO", "CephSource", "DraftCluster", "Entry", "Reach", "SwiftSource",
           "discover_ceph", "discover_swift", "inventory_text"]
