"""Simulated BMCs: one `ipmi_sim` (Debian's openipmi) per lab node, on its own 127.0.0.1 port.

Each answers IPMI v2 (lanplus) as user `admin` with the password of a 0600 file of the lab,
and hands chassis power to a hook, `<hook...> NODE get power` (prints `power:0|1`) and
`<hook...> NODE set power 0|1` (lab/bmc_hook.py), which must be idempotent: ipmitool
retransmits a request it got no answer to in time, and ipmi_sim runs the hook again.

The configuration is the one verified by hand (../shared/lab-notes.md, "ipmi_sim"). The
process is ours, known by its pid file (lab/procs.py); `-n`: it stays in the foreground,
detached by a session of its own.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from clusters.access.private_files import write_private

from . import procs
from .exceptions import LabError

PROGRAM = "ipmi_sim"
USER = "admin"
CIPHER_SUITE = 3  # RAKP-HMAC-SHA1 / AES-128: named with -C, ipmitool skips a 10 s probe
START_TIMEOUT = 10.0
# an IPMI management controller at the BMC's usual address, with a SEL and no sensors
EMU_TEXT = """\
mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
sel_enable 0x20 1000 0x0a
mc_enable 0x20
"""


@dataclass(frozen=True)
class Bmc:
    """One node's BMC: its port, its files under the lab's home, its pid file and log."""

    node: str
    port: int
    directory: Path  # <lab home>/bmc/<node>
    run_dir: Path
    log_dir: Path

    @property
    def lan_conf(self) -> Path:
        return self.directory / "lan.conf"

    @property
    def emu(self) -> Path:
        return self.directory / "sim.emu"

    @property
    def state_dir(self) -> Path:
        return self.directory / "state"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / f"{PROGRAM}.{self.node}.pid"

    @property
    def log_file(self) -> Path:
        return self.log_dir / f"{PROGRAM}.{self.node}.log"


def ensure_password(path: Path) -> str:
    """The BMCs' password, made once (16 hex digits: IPMI v2 allows 20 bytes), 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        path.chmod(0o600)
        password = path.read_text().strip()
        if password:
            return password
        # empty: a `lab up` killed between making the file and writing it
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(8))
    return path.read_text().strip()


def lan_conf_text(bmc: Bmc, password: str, hook: list[str]) -> str:
    auths = "none md2 md5 straight"
    return "\n".join([
        "# Written by lab/bmc.py at every `lab up`; edits are lost.",
        f'name "{bmc.node}"',
        "set_working_mc 0x20",
        "  startlan 1",
        f"    addr 127.0.0.1 {bmc.port}",
        "    priv_limit admin",
        *(f"    allowed_auths_{who} {auths}"
          for who in ("callback", "user", "operator", "admin")),
        # without a GUID ipmi_sim does not offer IPMI v2 (RMCP+): "does not support IPMI v2"
        f"    guid {uuid.uuid5(uuid.NAMESPACE_DNS, f'bmc.{bmc.node}.faultline').hex}",
        "  endlan",
        f'  chassis_control "{" ".join([*hook, bmc.node])}"',
        f'  user 2 true "{USER}" "{password}" admin 10 {auths}',
        ""])


def udp_listening(table: str, port: int) -> bool:
    """Whether /proc/net/udp text has a socket bound to 127.0.0.1 or any address on `port`."""
    wanted = {f"0100007F:{port:04X}", f"00000000:{port:04X}"}
    return any(line.split()[1] in wanted for line in table.splitlines()[1:] if line.split())


def _port_taken(port: int) -> bool:
    # read, not bound: a bind of our own, while ipmi_sim starts, could make it fail
    return udp_listening(Path("/proc/net/udp").read_text(), port)


def start(bmc: Bmc, password: str, hook: list[str]) -> int:
    """Start the node's BMC (no-op if it runs); returns its PID once its port is bound."""
    pid = procs.alive_pid(bmc.pid_file, PROGRAM)
    if pid is not None:
        return pid
    if _port_taken(bmc.port):
        raise LabError(f"cannot start the BMC of {bmc.node}: 127.0.0.1:{bmc.port}/udp is "
                       "taken by another program")
    bmc.state_dir.mkdir(parents=True, exist_ok=True)
    for directory in (bmc.run_dir, bmc.log_dir):
        directory.mkdir(parents=True, exist_ok=True)
    write_private(bmc.lan_conf, lan_conf_text(bmc, password, hook))  # holds the password
    bmc.emu.write_text(EMU_TEXT)
    with open(bmc.log_file, "ab") as log:
        process = subprocess.Popen(
            [PROGRAM, "-c", str(bmc.lan_conf), "-f", str(bmc.emu), "-s", str(bmc.state_dir),
             "-n"], stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=bmc.directory,
            start_new_session=True)
    bmc.pid_file.write_text(f"{process.pid}\n")
    deadline = time.monotonic() + START_TIMEOUT
    while not _port_taken(bmc.port):
        if process.poll() is not None or time.monotonic() > deadline:
            procs.stop(bmc.pid_file, program=PROGRAM, deadline=2.0)
            raise LabError(f"the BMC of {bmc.node} did not listen on 127.0.0.1:{bmc.port} "
                           f"(see {bmc.log_file})")
        time.sleep(0.05)
    return process.pid


def stop(bmc: Bmc) -> str:
    """Stop the node's BMC (SIGTERM; it exits in about 1 s)."""
    pid = procs.read_pid(bmc.pid_file)
    outcome = procs.stop(bmc.pid_file, program=PROGRAM, deadline=5.0)
    if pid is not None:
        procs.reap(pid)
    return outcome
