"""What every lab's home directory holds: its state file, pid files, logs and SSH material."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import sshd


@dataclass(frozen=True)
class LabHome:
    """The parts of a lab's home that the Ceph and the Swift lab share."""

    home: Path

    @property
    def state_file(self) -> Path:
        return self.home / "lab.json"

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    @property
    def log_dir(self) -> Path:
        return self.home / "log"

    @property
    def ssh(self) -> sshd.SshdLayout:
        # the client key is shared with other labs: one key for the whole lab machine
        return sshd.SshdLayout(directory=self.home / "sshd", run_dir=self.run_dir,
                               log_dir=self.log_dir,
                               client_key=self.home.parent / "ssh" / "id_ed25519")
