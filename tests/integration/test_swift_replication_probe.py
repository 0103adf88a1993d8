"""The replication probe sees a real gap: writes that went to handoffs while an object
server was down are not caught up until the server is back and replication has moved them."""

from __future__ import annotations

import http.client
import uuid
from urllib.parse import urlsplit

import pytest
from chaoslib.exceptions import ActivityFailed

from actions import swift as swift_actions
from clusters.credentials import swift_credentials
from probes import swift as swift_probes

pytestmark = pytest.mark.lab

CONFIG = {"faultline_cluster": "lab-swift"}


def _put_objects(cluster, count: int) -> list[int]:
    creds = swift_credentials(cluster)
    url = urlsplit(creds.auth_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("GET", url.path, headers={"X-Auth-User": creds.user, "X-Auth-Key": creds.key})
    response = conn.getresponse()
    response.read()
    token, storage = response.getheader("X-Auth-Token"), response.getheader("X-Storage-Url")
    container = f"{urlsplit(storage).path}/probe-{uuid.uuid4().hex[:8]}"
    statuses = []
    for i in range(count + 1):
        path = container if i == 0 else f"{container}/o{i}"
        conn.request("PUT", path, body=b"x" * 64 if i else None,
                     headers={"X-Auth-Token": token})
        answer = conn.getresponse()
        answer.read()
        statuses.append(answer.status)
    conn.close()
    return statuses


def test_probe_reports_not_caught_up_until_handoffs_are_replicated(swift_cluster):
    killed = swift_actions.kill_server(server="object", node="node2", configuration=CONFIG)
    try:
        # writes whose primary is node2 land on handoff nodes; the client sees no error
        statuses = _put_objects(swift_cluster, 100)
        assert set(statuses) <= {201, 202}, statuses

        handoffs = swift_probes.handoff_partitions(configuration=CONFIG)
        assert sum(handoffs.values()) > 0, handoffs
        with pytest.raises(ActivityFailed, match="not caught up") as failed:
            swift_probes.wait_for_replication_caught_up(timeout_s=3, configuration=CONFIG)
        assert "object-server.node2" in str(failed.value)
    finally:
        started = swift_actions.start_server(server="object", node="node2",
                                             configuration=CONFIG)
    assert started["started"] is True and killed["pid"] > 0

    caught_up = swift_probes.wait_for_replication_caught_up(timeout_s=400, configuration=CONFIG)

    assert caught_up["handoff_partitions"] == 0
    assert caught_up["dispersion"]["object_pct"] == 100.0
    assert caught_up["servers_down"] == []
    assert swift_probes.healthy(configuration=CONFIG) is True
