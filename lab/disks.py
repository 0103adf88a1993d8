"""Lab disks: sparse XFS image files, loop-mounted.

A disk is a file (sparse, so 6 GiB costs only what is written) holding an XFS
filesystem, mounted with `mount -o loop`. Killing a disk for real is then an
XFS shutdown, and unmount + mount brings it back.

Mounts are read from /proc/mounts only: after an XFS shutdown even `stat` of
the mount point fails, so `mountpoint` or `os.path.ismount` would lie.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .exceptions import DiskError

DEFAULT_IMAGE_SIZE = 6 * 1024**3



def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), check=check, capture_output=True, text=True)


def _unescape(field: str) -> str:
    """/proc/mounts escapes space, tab, newline and backslash as octal."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def mounts() -> list[tuple[str, str, str]]:
    """(device, mount point, fs type) of every mount, in mount order."""
    entries = []
    for line in Path("/proc/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 3:
            entries.append((_unescape(fields[0]), _unescape(fields[1]), fields[2]))
    return entries


def is_mounted(mount_point: str | Path) -> bool:
    target = os.path.abspath(mount_point)
    return any(mp == target for _, mp, _ in mounts())


def mounts_under(directory: str | Path) -> list[str]:
    """Mount points at or below a directory, deepest first (the order to unmount them)."""
    root = os.path.abspath(directory)
    found = {mp for _, mp, _ in mounts() if mp == root or mp.startswith(root + "/")}
    return sorted(found, key=lambda p: p.count("/"), reverse=True)


def create_image(image: Path, size: int = DEFAULT_IMAGE_SIZE) -> None:
    """Make a sparse image with a fresh XFS filesystem, unless it exists already."""
    if image.exists():
        return
    image.parent.mkdir(parents=True, exist_ok=True)
    partial = image.with_name(image.name + ".partial")  # never leave a half-made image
    _run("truncate", "-s", str(size), str(partial))
    _run("mkfs.xfs", "-q", "-f", str(partial))
    partial.replace(image)


def mount_image(image: Path, mount_point: Path) -> None:
    """Loop-mount an image; a no-op if something is mounted there already."""
    if is_mounted(mount_point):
        return
    mount_point.mkdir(parents=True, exist_ok=True)
    _run("mount", "-o", "loop,noatime", str(image), str(mount_point))


def mount_fresh(image: Path, mount_point: Path) -> None:
    """Mount an image on a new loop device, even if a stale one still holds it.

    After an XFS shutdown and a lazy unmount, the dead filesystem lives on, on its
    old loop device, while processes keep files open there; `mount -o loop` would
    reuse that device and hand back the dead superblock. `nouuid`: the stale
    instance has the same UUID.
    """
    mount_point.mkdir(parents=True, exist_ok=True)
    device = _run("losetup", "-f", "--show", str(image)).stdout.strip()
    done = _run("mount", "-t", "xfs", "-o", "noatime,nouuid", device, str(mount_point),
                check=False)
    if done.returncode != 0:
        detach(device)
        raise DiskError(f"cannot mount {image} on {mount_point}: {done.stderr.strip()}")


def is_readable(mount_point: str | Path) -> bool:
    """False for a shut-down XFS: every access to it fails with EIO."""
    try:
        os.stat(mount_point)
        os.listdir(mount_point)
    except OSError:
        return False
    return True


def unmount(mount_point: str | Path) -> None:
    """Unmount, lazily if busy (a failed XFS can keep it busy); repeat for stacked mounts."""
    for _ in range(8):  # a killed lab may have mounted the same point more than once
        if not is_mounted(mount_point):
            return
        if _run("umount", str(mount_point), check=False).returncode != 0:
            _run("umount", "-l", str(mount_point))
    if is_mounted(mount_point):
        raise DiskError(f"{mount_point} is still mounted after repeated umount")


def loop_devices(image: Path) -> list[str]:
    """Loop devices bound to an image (`losetup -j`)."""
    out = _run("losetup", "-j", str(image), check=False).stdout
    return [line.split(":", 1)[0] for line in out.splitlines() if line.strip()]


def loop_devices_under(directory: str | Path) -> list[str]:
    """Loop devices backed by any file below a directory, deleted files included."""
    root = os.path.abspath(directory) + "/"
    out = _run("losetup", "--list", "--noheadings", "--raw", "-O", "NAME,BACK-FILE",
               check=False).stdout
    found = []
    for line in out.splitlines():
        name, _, back_file = line.partition(" ")
        if back_file.startswith(root):
            found.append(name)
    return found


def detach(device: str) -> None:
    # after a lazy umount the kernel may still hold the device for a moment;
    # `losetup -d` then only sets autoclear, which frees it once released
    _run("losetup", "-d", device, check=False)


def detach_loops(image: Path) -> None:
    for device in loop_devices(image):
        detach(device)
