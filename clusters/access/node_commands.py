"""Shell commands that read a node's state, shared by the mechanisms that build scripts for
a node (a fault, a scale step): each quotes what it is given."""

from __future__ import annotations

import shlex


def is_mounted(mount: str) -> str:
    """A command that succeeds when something is mounted on `mount`: read from /proc/mounts,
    since after an XFS shutdown even `stat` of the mount point fails."""
    return f"awk -v m={shlex.quote(mount)} '$2 == m {{ found = 1 }} END {{ exit !found }}' " \
           "/proc/mounts"
