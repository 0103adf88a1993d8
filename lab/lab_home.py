"""What every lab's home directory holds: its state file, pid files, logs and SSH material."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import sshd


@dataclass(frozen=True)
class LabHome:
    """The parts of a lab's home that the Ceph and the Swift lab share."""

    home: Path

    @property
    def state_file(self) -> Path:
        return self.home / "lab.json"

    def read_state(self) -> dict[str, Any]:
        """What the lab wrote down about itself (fsid, ids, whether it is initialised)."""
        try:
            return json.loads(self.state_file.read_text())
        except FileNotFoundError:
            return {}

    def write_state(self, state: dict[str, Any]) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2) + "\n")
        tmp.replace(self.state_file)

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
