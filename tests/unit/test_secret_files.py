"""Faultline refuses to start while a file holding a secret is open to other users
(service.store.secret_files), from the `faultline` command and from its control."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from service.cli import main
from service.store import secret_files
from service.store.exceptions import InsecureSecretFile


def _home(tmp_path, modes: dict[str, int]):
    for name, mode in modes.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("secret\n")
        path.chmod(mode)
    return tmp_path


def test_private_secrets_and_public_keys_pass(tmp_path):
    home = _home(tmp_path, {"secret_key": 0o600, "pg-password": 0o400,
                            "lab/ssh/id_ed25519": 0o600, "lab/ssh/id_ed25519.pub": 0o644,
                            "lab/ceph/sshd/node1/ssh_host_ed25519_key": 0o600,
                            "inventory.yaml": 0o644})

    secret_files.check(home)  # nothing raised

    assert [p.relative_to(home).as_posix() for p in secret_files.secret_files(home)] == [
        "lab/ceph/sshd/node1/ssh_host_ed25519_key", "lab/ssh/id_ed25519", "pg-password",
        "secret_key"]


@pytest.mark.parametrize(("name", "mode"), [
    ("secret_key", 0o644), ("alert-token", 0o640), ("pg-password", 0o604),
    ("monitoring/config/secrets/prometheus-token", 0o660), ("lab/ssh/id_ed25519", 0o644),
    ("lab/swift/sshd/node2/ssh_host_ed25519_key", 0o620), ("lab/ceph/rgw/s3.secret_key", 0o644),
    ("lab/swift/etc/tester.key", 0o606),
])
def test_a_secret_open_to_others_is_named_with_its_mode_and_the_fix(tmp_path, name, mode):
    home = _home(tmp_path, {"secret_key": 0o600, name: mode})

    with pytest.raises(InsecureSecretFile) as raised:
        secret_files.check(home)

    path = home / name
    assert str(raised.value) == (
        f"refusing to start: {path} holds a secret and other users can read or change it "
        f"(mode {mode:04o}); make it private with `chmod 600 {path}`")


def test_the_faultline_command_refuses_to_start_with_one_line_and_changes_nothing(tmp_path):
    home = _home(tmp_path, {"secret_key": 0o644})
    before = sorted(p.name for p in home.rglob("*"))

    done = CliRunner().invoke(main, ["lab", "status"], env={"FAULTLINE_HOME": str(home)})

    assert done.exit_code == 2, done.output
    assert done.output.strip().splitlines() == [
        f"error: refusing to start: {home / 'secret_key'} holds a secret and other users can "
        f"read or change it (mode 0644); make it private with `chmod 600 {home / 'secret_key'}`"]
    assert sorted(p.name for p in home.rglob("*")) == before
