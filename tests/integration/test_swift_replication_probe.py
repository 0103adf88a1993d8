"""The replication probe sees a real gap: writes that went to handoffs while an object
server was down are not caught up until the server is back and replication has moved them."""

from __future__ import annotations

import http.client
import uuid
from urllib.parse import urlsplit

import pytest
from chaoslib.exceptions import ActivityFailed

from actions import swift as swift_actions
from clusters.access.credentials import swift_credentials
from probes import swift as swift_probes

pytestmark = pytest.mark.lab

CONFIG = {"faultline_cluster": "lab-swift"}


class Scratch:
    """A container of its own in the Swift lab, emptied and deleted after the test."""

    def __init__(self, cluster):
        creds = swift_credentials(cluster)
        url = urlsplit(creds.auth_url)
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        _, headers = self._request("GET", url.path, {"X-Auth-User": creds.user,
                                                     "X-Auth-Key": creds.key})
        self.token = headers["x-auth-token"]
        self.path = f"{urlsplit(headers['x-storage-url']).path}/probe-{uuid.uuid4().hex[:8]}"
        self.names: list[str] = []

    def _request(self, method: str, path: str, headers: dict, body: bytes | None = None):
        try:
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            # the proxy closes a keep-alive connection left idle while the test waited for
            # replication; PUT and DELETE are idempotent, so the request is sent again
            self.conn.close()
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
        response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}

    def put(self, count: int) -> list[int]:
        statuses = [self._request("PUT", self.path, {"X-Auth-Token": self.token})[0]]
        for _ in range(count):
            name = f"o{len(self.names)}"
            self.names.append(name)
            statuses.append(self._request("PUT", f"{self.path}/{name}",
                                          {"X-Auth-Token": self.token}, b"x" * 64)[0])
        return statuses

    def delete(self) -> None:
        for name in self.names:
            self._request("DELETE", f"{self.path}/{name}", {"X-Auth-Token": self.token})
        self._request("DELETE", self.path, {"X-Auth-Token": self.token})
        self.conn.close()


@pytest.fixture
def scratch(swift_cluster):
    container = Scratch(swift_cluster)
    yield container
    container.delete()


def test_probe_reports_not_caught_up_until_handoffs_are_replicated(scratch):
    killed = swift_actions.kill_server(server="object", node="node2", configuration=CONFIG)
    try:
        # writes whose primary is node2 land on handoff nodes; the client sees no error
        statuses = scratch.put(100)
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
