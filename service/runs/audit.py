"""Re-verify a stored run: read back every object its ledger says was acknowledged."""

from __future__ import annotations

from clusters.access.inventory import load_cluster
from clusters.paths import default_inventory
from loadgen.drivers import driver_for
from loadgen.payload import PayloadSource
from loadgen.verify import VerifyResult, verify
from loadgen.workload import parse_workload
from service.results import figures
from service.store import db
from service.store.recording import load_ledger


def reverify(run_id: int, inventory: str | None = None) -> VerifyResult:
    with db.session_factory()() as session:
        run = figures.get_run(session, run_id)
        entries = load_ledger(session, run_id)
        cluster_name, workload = run.cluster, parse_workload(run.workload)
    cluster = load_cluster(inventory or default_inventory(), cluster_name)
    driver = driver_for(cluster, workload)
    driver.connect()
    try:
        lo, hi = workload.size_range()
        return verify(driver, entries, PayloadSource(workload.seed, lo, hi))
    finally:
        driver.close()
