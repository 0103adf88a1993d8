"""actions.swift.answers_healthcheck asks only the server the inventory names, where the
inventory says it listens; it takes no address, so it cannot probe anything else."""

from __future__ import annotations

import http.server
import inspect
import threading

import pytest
import yaml
from chaoslib.exceptions import ActivityFailed

from actions import swift


class _Healthcheck(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(200 if self.path == "/healthcheck" else 404)
        self.end_headers()
        self.wfile.write(b"OK")

    def log_message(self, *args):
        pass


@pytest.fixture
def configuration(tmp_path):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Healthcheck)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump({"clusters": {"s": {
        "kind": "swift", "client": {"ports": {"object": port}},
        "nodes": [{"name": "node1", "address": "127.0.0.1"}],
        "services": [{"name": "object-server.node1", "kind": "object-server",
                      "node": "node1", "unit": "swift-object"}]}}}))
    yield {"faultline_cluster": "s", "faultline_inventory": str(inventory)}
    server.shutdown()


def test_answers_healthcheck_takes_a_server_and_a_node_never_an_address():
    assert list(inspect.signature(swift.answers_healthcheck).parameters) == [
        "server", "node", "configuration"]


def test_answers_healthcheck_asks_the_inventory_s_server_where_it_listens(configuration):
    assert swift.answers_healthcheck("object", "node1", configuration=configuration) is True


def test_answers_healthcheck_refuses_a_node_the_inventory_does_not_have(configuration):
    with pytest.raises(ActivityFailed, match="has no node '10.0.0.1'"):
        swift.answers_healthcheck("object", "10.0.0.1", configuration=configuration)
