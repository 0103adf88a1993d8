"""Errors of the clusters package.

    ClusterError
     +-- InventoryError        the inventory file is missing or malformed
     |    +-- UnknownCluster   no cluster of that name in the inventory
     +-- NodeUnreachable       SSH could not connect or authenticate
     |    +-- HostKeyMismatch  the node's host key is not the one on record
     +-- RemoteCommandFailed   a command on a node exited non-zero
     +-- BmcUnavailable        a node's BMC does not answer or refuses the login
     +-- AdminCommandFailed    a Ceph mon command failed or timed out
     +-- CredentialsError      client credentials are not configured or cannot be read
     |    +-- InsecureSecretFile  a key or password file others can read, or not ours
     +-- FaultLedgerError      the local fault ledger file cannot be read
     +-- BlastRadiusExceeded   a fault would leave data unavailable or on its last copy
 +-- ProtectedCluster      a fault on a cluster whose inventory says `chaos: protected`
     +-- InvalidCorruption     a corruption's arguments do not make sense on the cluster
     +-- InvalidLinkFault      a lossy link's arguments do not make sense on the cluster
     +-- InvalidThrottle       a disk throttle's arguments do not make sense on the cluster
     +-- InvalidCpuHog         a CPU hog's arguments do not make sense
     +-- InvalidMemoryHog      a memory hog's arguments do not make sense or do not fit the node
     +-- InvalidScale          a scale action's arguments do not make sense on the cluster
"""


class ClusterError(Exception):
    """Root of every error a user can cause by pointing at a bad cluster."""


class InventoryError(ClusterError):
    pass


class UnknownCluster(InventoryError):
    pass


class NodeUnreachable(ClusterError):
    pass


class HostKeyMismatch(NodeUnreachable):
    pass


class RemoteCommandFailed(ClusterError):
    pass


class BmcUnavailable(ClusterError):
    """A node's BMC did not answer ipmitool, or refused its user and password."""


class AdminCommandFailed(ClusterError):
    pass


class CredentialsError(ClusterError):
    pass


class InsecureSecretFile(CredentialsError):
    """A key or password file named in the inventory is open to other users, or theirs."""


class FaultLedgerError(ClusterError):
    pass


class BlastRadiusExceeded(ClusterError):
    """The guard refused a fault (clusters/safety/guard.py); the message gives its reasoning."""


class InvalidCorruption(ClusterError):
    """A corruption's arguments do not make sense (no such object, replica or mode)."""


class InvalidLinkFault(ClusterError):
    """A lossy link's arguments do not make sense on this cluster."""


class InvalidThrottle(ClusterError):
    """A disk throttle's arguments do not make sense on this cluster."""


class InvalidCpuHog(ClusterError):
    """A CPU hog's arguments do not make sense (no ceiling, no timeout, too many workers)."""


class InvalidMemoryHog(ClusterError):
    """A memory hog unbounded, absurd or bigger than its node's memory."""


class InvalidScale(ClusterError):
    """A scale action's arguments do not make sense (unknown node, silly size or weight, a
    device scale did not add)."""


class ProtectedCluster(ClusterError):
    """A fault was asked of a cluster that takes none (`chaos: protected`)."""
