"""The recovery-profile study's knob on the Reef lab (Ceph 18 with mClock): a profile set
for every OSD takes on each of them and is put back exactly, by the restore or by `faultline
heal` after a killed run; a change the OSDs do not take fails and is still undone; a value
the release refuses is one error before the run and changes nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from chaoslib.exceptions import ActivityFailed

from actions.recovery_tuning import restore_ceph_recovery, set_ceph_recovery
from clusters.ceph.admin import CephAdmin
from lab import ceph_reef

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
CONFIGURATION = {"faultline_cluster": ceph_reef.CLUSTER_NAME}
NAMES = ("osd_mclock_profile", "osd_max_backfills", "osd_mclock_override_recovery_settings")


def _database(cluster) -> dict[str, str]:
    """What the monitors' config database holds for these names, for every OSD."""
    with CephAdmin(cluster.client["conf"]) as admin:
        return {e["name"]: str(e["value"]) for e in admin.command("config dump")
                if e["section"] == "osd" and e["name"] in NAMES}


def _running(cluster, name: str) -> set[str]:
    """The value each OSD runs, its default included."""
    with CephAdmin(cluster.client["conf"]) as admin:
        return {str(e["value"]) for osd in range(4)
                for e in admin.command("config show-with-defaults", who=f"osd.{osd}")
                if e["name"] == name}


def test_a_profile_takes_on_every_osd_and_the_restore_puts_back_what_was_there(reef_cluster):
    assert _database(reef_cluster) == {}
    set_out = set_ceph_recovery(settings={"osd_mclock_profile": "high_recovery_ops"},
                                configuration=CONFIGURATION)
    try:
        assert set_out["previous"] == {"osd_mclock_profile": None}
        assert set(set_out["osds"]) == {"osd.0", "osd.1", "osd.2", "osd.3"}
        assert _running(reef_cluster, "osd_mclock_profile") == {"high_recovery_ops"}
        assert _database(reef_cluster) == {"osd_mclock_profile": "high_recovery_ops"}
    finally:
        restored = restore_ceph_recovery(configuration=CONFIGURATION)
    assert restored == {"restored": {"osd_mclock_profile": None}}
    assert _database(reef_cluster) == {}  # removed, as there was nothing before
    assert _running(reef_cluster, "osd_mclock_profile") == {"balanced"}  # Reef's default
    assert restore_ceph_recovery(configuration=CONFIGURATION) == {"restored": {}}


def test_a_change_the_osds_do_not_take_fails_and_is_still_undone(reef_cluster):
    """Under mClock an OSD resets osd_max_backfills to its default unless the override is
    set: the setting is in the database, yet no OSD runs it."""
    with pytest.raises(ActivityFailed, match="did not take within 15 s: osd.0 runs "
                                             "osd_max_backfills=1"):
        set_ceph_recovery(settings={"osd_max_backfills": 7}, configuration=CONFIGURATION)
    assert _database(reef_cluster) == {"osd_max_backfills": "7"}  # the ledger knows it
    restore_ceph_recovery(configuration=CONFIGURATION)
    assert _database(reef_cluster) == {}


KILLED_AFTER_SET = """
import sys
from actions.recovery_tuning import set_ceph_recovery
set_ceph_recovery(settings={"osd_mclock_profile": "high_client_ops",
                            "osd_mclock_override_recovery_settings": True},
                  configuration={"faultline_cluster": "lab-ceph-reef"})
print("set", flush=True)
sys.stdin.read()  # until the test SIGKILLs this run
"""


def test_heal_puts_the_settings_back_after_a_killed_run(reef_cluster, env):
    run = subprocess.Popen([sys.executable, "-c", KILLED_AFTER_SET], env=env, cwd=REPO,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout.readline().strip() == "set"
    finally:
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
    assert _database(reef_cluster) == {"osd_mclock_profile": "high_client_ops",
                                       "osd_mclock_override_recovery_settings": "true"}
    healed = subprocess.run(["faultline", "heal", "--cluster", ceph_reef.CLUSTER_NAME],
                            env=env, capture_output=True, text=True, timeout=300)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert "OSD settings osd_mclock_profile=high_client_ops" in healed.stdout
    assert _database(reef_cluster) == {}


@pytest.mark.parametrize(("settings", "says"), [
    ({"osd_mclock_profile": "fastest"}, "osd_mclock_profile 'fastest' is not one of this "
                                        "release's values: balanced, high_recovery_ops"),
    ({"osd_op_queue": "wpq"}, "'osd_op_queue' is not a setting a run changes"),
])
def test_a_setting_the_release_refuses_is_one_error_and_changes_nothing(
        reef_cluster, env, tmp_path, settings, says):
    document = json.loads((REPO / "experiments" / "ceph-recovery-balanced.json").read_text())
    document["method"][1]["provider"]["arguments"]["settings"] = settings
    path = tmp_path / "bad-profile.json"
    path.write_text(json.dumps(document))

    done = subprocess.run(["faultline", "run", str(path), "--cluster", ceph_reef.CLUSTER_NAME],
                          env=env, cwd=REPO, capture_output=True, text=True, timeout=300)

    assert done.returncode == 2, done.stdout + done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and says in last, done.stderr
    assert _database(reef_cluster) == {}
