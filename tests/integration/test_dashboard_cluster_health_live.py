"""The live health of a real cluster, as the clusters page asks it: the Ceph lab answers
with its state within the deadline. Needs the lab (the ceph_cluster fixture)."""

from __future__ import annotations

import pytest
from web_login import SECRET, log_in

from clusters.paths import default_inventory
from service.web.app import create_app

pytestmark = pytest.mark.lab


def test_the_health_of_the_ceph_lab_is_its_monitors_state(ceph_cluster, database_url,
                                                           make_user):
    client = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET,
                         "INVENTORY": str(default_inventory())}).test_client()
    assert log_in(client, *make_user("viewer")).status_code == 302

    health = client.get(f"/clusters/{ceph_cluster.name}/health.json").get_json()

    assert health["reachable"] is True, health
    assert health["health"] in ("HEALTH_OK", "HEALTH_WARN")
    assert health["state"]["num_osds"] == 4 and health["state"]["num_pgs"] > 0
    assert health["summary"].startswith(health["health"])
    assert health["took_s"] < 8
