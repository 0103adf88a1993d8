"""What a container node holds of its own, written into its overlay before it boots
(lab/nspawn.py): its SSH host key and the lab's client key as root's only way in, an sshd
drop-in, and which of the root's units it enables or masks. Shared by the labs whose nodes
boot systemd (lab/ceph_reef.py, lab/swift_current.py)."""

from __future__ import annotations

from pathlib import Path

from . import netns, sshd

NODE_SSH_DIR = "/etc/faultline"  # in a node: its host key and the lab's authorized_keys
SSHD_DROP_IN = "/etc/ssh/sshd_config.d/faultline.conf"
UNIT_DIR = "etc/systemd/system"
WANTS = f"{UNIT_DIR}/multi-user.target.wants"
PACKAGED_UNITS = "/usr/lib/systemd/system"


def sshd_drop_in() -> str:
    return "\n".join([
        f"HostKey {NODE_SSH_DIR}/ssh_host_ed25519_key",
        f"AuthorizedKeysFile {NODE_SSH_DIR}/authorized_keys",
        "PermitRootLogin prohibit-password", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "UseDNS no", "PrintMotd no",
        "MaxStartups 64:30:128", "MaxSessions 64", ""])


def write_ssh_access(root: Path, ssh: sshd.SshdLayout, node: netns.LabNode) -> None:
    """The node's own host key, the lab's client key as root's only way in, and an sshd
    drop-in naming them."""
    ssh_dir = root / NODE_SSH_DIR.lstrip("/")
    ssh_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    for name, source in (("ssh_host_ed25519_key", ssh.host_key(node)),
                         ("authorized_keys", ssh.authorized_keys)):
        (ssh_dir / name).write_bytes(source.read_bytes())
        (ssh_dir / name).chmod(0o600)
    (root / SSHD_DROP_IN.lstrip("/")).write_text(sshd_drop_in())


def mask_units(root: Path, units: tuple[str, ...] | list[str]) -> None:
    for unit in units:
        link = root / UNIT_DIR / unit
        if not link.is_symlink():
            link.symlink_to("/dev/null")


def enable_units(root: Path, units: list[str]) -> None:
    """What `systemctl enable` does for a unit WantedBy=multi-user.target, done before the
    node boots, so that its first boot starts them."""
    wants = root / WANTS
    wants.mkdir(parents=True, exist_ok=True)
    for unit in units:
        link = wants / unit
        if not link.is_symlink():
            link.symlink_to(f"{PACKAGED_UNITS}/{unit}")
