"""The lab's proxy config, read by Swift's own memcache middleware.

Swift patches logging's locks for eventlet when imported, so it is read in a
child process and the test process keeps plain threads.
"""

import json
import subprocess
import sys

from lab.swift_layout import SwiftLab, proxy_conf_text
from loadgen.drivers import SWIFT_MAX_WORKERS

READ_CACHE_FILTER = """
import json, sys
from configparser import ConfigParser
from swift.common.middleware import memcache
parser = ConfigParser(interpolation=None)
parser.read(sys.argv[1])
conf = dict(parser.items("filter:cache"))
conf.pop("use")
ring = memcache.filter_factory({}, **conf)(app=None).memcache
print(json.dumps({server: pool.max_size for server, pool in ring._client_cache.items()}))
"""


def _memcached_pools(tmp_path) -> dict[str, int]:
    conf = tmp_path / "proxy-server.conf"
    conf.write_text(proxy_conf_text(SwiftLab(tmp_path).etc))
    out = subprocess.run([sys.executable, "-c", READ_CACHE_FILTER, str(conf)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_every_load_worker_gets_a_memcached_connection_without_queueing(tmp_path):
    # two pooled connections made a busy proxy time out on the pool, error-limit
    # its only memcached and refuse every request for a minute
    pools = _memcached_pools(tmp_path)
    assert list(pools) == ["127.0.0.1:6250"]
    assert pools["127.0.0.1:6250"] >= SWIFT_MAX_WORKERS
