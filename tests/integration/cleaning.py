"""`faultline clean` on a finished run of the real lab, checked by the cluster's answers."""

from __future__ import annotations

import json
import subprocess


def clean(run_id: int, env: dict) -> dict:
    done = subprocess.run(["faultline", "clean", str(run_id), "--json"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)[str(run_id)]


def assert_cleaned(run_id: int, env: dict, lost: int = 0, check_again: bool = True) -> None:
    """Every acknowledged object is deleted (those the run lost were already gone); a second
    clean finds every one gone on the cluster; verify then says why it has nothing to read.
    `check_again=False` skips the second clean (on the Swift lab it costs about a minute of
    make test; the Ceph test keeps it, and the code path is the same)."""
    first = clean(run_id, env)
    assert first["objects"] > 0 and first["failed"] == 0, first
    assert (first["deleted"], first["already_gone"]) == (first["objects"] - lost, lost), first
    if check_again:
        again = clean(run_id, env)
        assert (again["deleted"], again["already_gone"]) == (0, first["objects"]), again
    audit = subprocess.run(["faultline", "verify", str(run_id)], env=env,
                           capture_output=True, text=True, timeout=300)
    assert audit.returncode == 2, audit.stdout + audit.stderr
    assert "deleted" in audit.stderr and "faultline clean" in audit.stderr, audit.stderr
