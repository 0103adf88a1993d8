"""The root filesystems of the production-like labs' nodes: Debian 13 (trixie) with its own
Ceph packages (`CEPH`) or its own Swift packages (`SWIFT`), each made once and shared
read-only by every node of its lab (lab/nspawn.py).

It is built with `debootstrap --variant=minbase` and `apt-get install` in a chroot, from
the Debian mirror this machine already uses (/etc/apt/sources.list.d), and cached under
<FAULTLINE_HOME>/rootfs/<key>, where the key is a hash of what goes into it (suite,
packages, the recipe's version): a changed package list makes a new root, an unchanged one
is reused. A build goes to `<key>.partial` and is renamed only when complete, so a killed
build is never taken for a root.

The chroot's /proc, /sys and /dev are bound in a private mount namespace (`unshare -m`),
so they vanish with the build's processes whatever happens to it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clusters.paths import state_dir

from .exceptions import RootfsError

log = logging.getLogger(__name__)

SUITE = "trixie"
# what debootstrap puts in besides minbase: a node boots systemd, and is reached over SSH
BASE = ("systemd", "systemd-sysv", "dbus", "iproute2", "ca-certificates")
RECIPE = 2  # bump when the steps below change what a root holds
MGR_UTIL = "usr/share/ceph/mgr/mgr_util.py"
WANTS = "etc/systemd/system/multi-user.target.wants"
SOURCES = Path("/etc/apt/sources.list.d")
DEFAULT_MIRROR = "http://deb.debian.org/debian"
BUILD_TIMEOUT = 1200


@dataclass(frozen=True)
class Recipe:
    """What one lab's root holds besides the base."""

    packages: tuple[str, ...]
    # services of the packages that have nothing to do in a container without disks of
    # its own: masked in the root
    masked: tuple[str, ...] = ()
    # units the packages enabled that a node enables itself, only where it runs them
    # (globs of multi-user.target.wants): disabled in the root
    disabled: tuple[str, ...] = ()
    fix: Callable[[Path], None] | None = None  # a repair of a packaged file, in the root
    version: int = RECIPE


def _ceph_fixes(root: Path) -> None:
    _import_bcrypt_lazily(root / MGR_UTIL)


def key(recipe: Recipe) -> str:
    """The cache key of the root this recipe makes (the package order does not matter)."""
    spec = {"suite": SUITE, "base": BASE, "packages": sorted(recipe.packages),
            "recipe": recipe.version}
    return hashlib.sha256(json.dumps(spec).encode()).hexdigest()[:16]


def cache_dir() -> Path:
    return state_dir() / "rootfs"


def path(recipe: Recipe | None = None) -> Path:
    return cache_dir() / key(recipe or CEPH)


def mirrors(sources_dir: Path = SOURCES) -> tuple[str, str]:
    """The Debian mirror and security mirror configured on this machine (deb822 or
    one-line sources), falling back to deb.debian.org."""
    main, security = None, None
    texts = [p.read_text() for p in sorted(sources_dir.glob("*.sources"))
             + sorted(sources_dir.glob("*.list"))] if sources_dir.is_dir() else []
    for text in texts:
        for uri in re.findall(r"^\s*(?:URIs:|deb)\s+(?:\[[^]]*\]\s+)?(\S+)", text, re.M):
            uri = uri.rstrip("/")
            if uri.endswith("/debian-security") and security is None:
                security = uri
            elif uri.endswith("/debian") and main is None:
                main = uri
    main = main or DEFAULT_MIRROR
    return main, security or main.removesuffix("/debian") + "/debian-security"


def sources_text(main: str, security: str) -> str:
    return (f"deb {main} {SUITE} main\n"
            f"deb {main} {SUITE}-updates main\n"
            f"deb {security} {SUITE}-security main\n")


def _run(argv: list[str], log_file: Path, step: str) -> None:
    with open(log_file, "ab") as out:
        out.write(f"\n$ {' '.join(argv)}\n".encode())
        out.flush()
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                              timeout=BUILD_TIMEOUT)
    if done.returncode != 0:
        raise RootfsError(f"building the lab's root filesystem: {step} exited "
                          f"{done.returncode} (see {log_file})")


def _chroot_script(packages: tuple[str, ...]) -> str:
    """Run in the new root, with /proc, /sys and /dev bound in a private mount namespace."""
    return f"""set -e
root="$1"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \\
    DEBIAN_FRONTEND=noninteractive sh -c '
  set -e
  apt-get update -q
  apt-get install -y -q --no-install-recommends {' '.join(packages)}
  apt-get clean
  rm -rf /var/lib/apt/lists/*
'
"""


def _import_bcrypt_lazily(mgr_util: Path) -> None:
    """Debian 13's ceph-mgr 18.2.7 cannot load a single Python module: mgr_util imports
    bcrypt at the top, and bcrypt (Rust, PyO3) refuses to load in a sub-interpreter, which
    is what every mgr module runs in ("PyO3 modules do not yet support subinterpreters"),
    so 11 always-on modules fail and the cluster is never HEALTH_OK. bcrypt is only used
    to hash dashboard passwords: import it where it is used, as later Ceph releases do."""
    text = mgr_util.read_text()
    if "\nimport bcrypt\n" not in text:
        return  # fixed by the packagers
    text = text.replace("\nimport bcrypt\n", "\n", 1)
    text = text.replace("    if not password:\n        return None\n",
                        "    if not password:\n        return None\n    import bcrypt\n", 1)
    mgr_util.write_text(text)


def build(recipe: Recipe) -> Path:
    """Make the root (debootstrap, then apt-get install in it); returns its path."""
    target = path(recipe)
    partial = target.with_name(target.name + ".partial")
    cache_dir().mkdir(parents=True, exist_ok=True)
    shutil.rmtree(partial, ignore_errors=True)
    log_file = target.with_name(target.name + ".log")
    log_file.write_text("")
    main, security = mirrors()
    started = time.monotonic()
    _run(["debootstrap", "--variant=minbase", f"--include={','.join(BASE)}", SUITE,
          str(partial), main], log_file, "debootstrap")
    # packages must not start their services in the chroot
    policy = partial / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    (partial / "etc/apt/sources.list").write_text(sources_text(main, security))
    _run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
          _chroot_script(recipe.packages), "build", str(partial)], log_file,
         "apt-get install")
    policy.unlink()
    if recipe.fix:
        recipe.fix(partial)
    for unit in recipe.masked:
        (partial / "etc/systemd/system" / unit).unlink(missing_ok=True)
        (partial / "etc/systemd/system" / unit).symlink_to("/dev/null")
    for pattern in recipe.disabled:
        for link in (partial / WANTS).glob(pattern):
            link.unlink()
    # every node gets its own host key (lab/nspawn.py); none is shared through the root
    for host_key in (partial / "etc/ssh").glob("ssh_host_*"):
        host_key.unlink()
    (partial / "etc/machine-id").write_text("")  # each boot makes its own
    (partial / ".faultline-rootfs").write_text(json.dumps(
        {"suite": SUITE, "packages": sorted(recipe.packages), "recipe": recipe.version,
         "built_in_s": round(time.monotonic() - started, 1)}) + "\n")
    partial.rename(target)
    log.info("built the lab root %s in %.0f s", target, time.monotonic() - started)
    return target


def ensure(recipe: Recipe | None = None) -> tuple[Path, float | None]:
    """The root of this recipe (Ceph's by default), built if missing; (path, seconds the
    build took or None)."""
    recipe = recipe or CEPH
    target = path(recipe)
    if (target / ".faultline-rootfs").is_file():
        return target, None
    started = time.monotonic()
    build(recipe)
    return target, round(time.monotonic() - started, 1)


def stale() -> list[Path]:
    """Roots (and partial builds) of no current recipe: safe to delete."""
    current = {key(CEPH), key(SWIFT)}
    if not cache_dir().is_dir():
        return []
    return sorted(p for p in cache_dir().iterdir()
                  if p.is_dir() and p.name not in current)


CEPH = Recipe(packages=("ceph-mon", "ceph-mgr", "ceph-osd", "openssh-server"),
              masked=("smartmontools.service", "nvmf-autoconnect.service",
                      "e2scrub_reap.service"),
              fix=_ceph_fixes)
# Debian's Swift units (Restart=on-failure) as packaged; rsyslog only copies what the
# journal already has, and each node enables the servers it runs (lab/swift_current.py)
SWIFT = Recipe(packages=("swift-proxy", "swift-object", "swift-container", "swift-account",
                         "memcached", "rsync", "openssh-server"),
               masked=("rsyslog.service", "e2scrub_reap.service", "cron.service",
                       "apt-daily.timer", "apt-daily-upgrade.timer", "dpkg-db-backup.timer"),
               disabled=("swift-*", "memcached.service", "rsync.service"), version=3)
