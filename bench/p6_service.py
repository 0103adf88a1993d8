"""P6, the service: the run page of a 1 h run at 1 s samples, its chart data, and the runs
list with 10,000 runs in the database; p95 of 20 requests each, target 300 ms.

Everything runs for real: a database of its own (`faultline_bench_p6`) on the embedded
PostgreSQL server (service.store.pgserver), made by the project's Alembic migrations and dropped
at the end; the runs written through the models (the 1 h run through the recorder a real
run writes with, its load samples produced by loadgen.samples.SampleRecorder with their HDR
histograms, its figures computed by service.results.figures); the app of `faultline serve`
(service.web.app.create_app) served over HTTP from a thread; a viewer logged in through the
login form; each page fetched with requests, 3 warm-up requests, then 20 timed ones.

    .venv/bin/python -m bench.p6_service [--json FILE]
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import re
import statistics
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import requests
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session, sessionmaker

from bench.results import Row, arguments, fail, percentile, report
from clusters.ceph.admin import CephState
from loadgen.samples import SampleRecorder
from loadgen.verify import VerifyResult
from loadgen.workload import OPS, Workload
from service.accounts import services as accounts
from service.results import figures
from service.results.report import FIGURE_KEYS
from service.store import db, pgserver
from service.store.models import ClusterSample, Event, LoadSample, Run
from service.store.recording import RunRecorder
from service.web.app import create_app
from service.web.server import served

REPO = Path(__file__).resolve().parent.parent
DATABASE = "faultline_bench_p6"
RUNS = 10_000
WARMUP, TIMED = 3, 20
TARGET_MS = 300.0
TARGET = f"≤ {TARGET_MS:.0f} ms"
CSRF_TOKEN = re.compile(r'name="csrf_token" (?:type="hidden" )?value="([^"]+)"')

# the 1 h run: lab-ceph, librados load, osd.1 killed 10 min in, started again 30 min later
LOAD_S = 3600
RATE = 100.0
FAULT_AT = 600.0  # seconds from the start of the load
DOWN_SEEN = FAULT_AT + 3  # peers report the killed OSD, the mons mark it down
PEERED = FAULT_AT + 6  # its PGs peer again without it: the stalled ops complete
OUT_AT = FAULT_AT + 30  # mon_osd_down_out_interval: marked out, PGs re-peer, backfill
BACKFILLED = OUT_AT + 240
RESTORE_AT = FAULT_AT + 1800
BACK_UP = RESTORE_AT + 5  # the restarted OSD boots and is up and in again
MOVED_BACK = BACK_UP + 200  # the misplaced objects have moved back
OP_TIMEOUT_S = 10.0
BASE_MS = {"read": 2.4, "write": 8.5, "delete": 5.5}
NUM_PGS = 161
OBJECTS = 620  # the pools' objects (the load's and RGW's), three copies each


# --- the database ------------------------------------------------------------------------

def fresh_database() -> str:
    """Drop and create the bench's database, migrate it as production does; its URL."""
    url = pgserver.recreate_database(DATABASE)
    db.migrate(url)
    return url


def drop_database(url: str) -> None:
    db.engine(url).dispose()
    pgserver.drop_database(DATABASE)


def stop_server_if_unused() -> None:
    """Stop the server this bench started, unless someone else began to use it meanwhile
    (tests on this machine reuse a running server and would lose their connections)."""
    with psycopg.connect(pgserver.admin_dsn(), autocommit=True) as conn:
        others = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname IS NOT NULL"
                              " AND pid <> pg_backend_pid()").fetchone()[0]
    if others:
        print(f"P6: left the PostgreSQL server it started running: {others} other "
              "connection(s) use it now", flush=True)
    else:
        pgserver.stop()


# --- the 1 h run -------------------------------------------------------------------------

def _experiment(name: str) -> dict[str, Any]:
    return json.loads((REPO / "experiments" / name).read_text())


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


def _latency(op: str, t: float, rng: random.Random) -> float:
    """Seconds from the intended start of an op started `t` s into the load to its end."""
    base = rng.lognormvariate(math.log(BASE_MS[op]), 0.35) / 1000
    if FAULT_AT <= t < PEERED and rng.random() < 0.3:  # its PG's primary was osd.1
        return PEERED - t + base * 3
    if OUT_AT <= t < OUT_AT + 4 and rng.random() < 0.3:  # re-peering after the out
        return OUT_AT + 4 - t + base * 2
    if BACK_UP <= t < BACK_UP + 3 and rng.random() < 0.3:  # peering with osd.1 back
        return BACK_UP + 3 - t + base * 2
    if OUT_AT <= t < BACKFILLED or BACK_UP <= t < MOVED_BACK:  # recovery traffic
        base *= 1.6
    if rng.random() < 0.002:  # the odd slow op
        base *= rng.uniform(5, 30)
    return base


def _load_samples(t0: float, recorder: RunRecorder, rng: random.Random) -> int:
    """An hour of an open-loop 100 ops/s 80/15/5 load, as loadgen's SampleRecorder buckets
    it (ops by the second they completed in, errors by class, HDR histograms), written a
    minute at a time through the recorder of real runs."""
    samples = SampleRecorder(wall_start=t0, mono_start=0.0)
    ops, weights = list(OPS), [80, 15, 5]
    written = 0
    for second in range(LOAD_S):
        rate = RATE * min(1.0, (second + 1) / 5)  # ramp_s 5
        n = int(rate)
        for i in range(n):
            t = second + i / n
            op = rng.choices(ops, weights)[0]
            latency = _latency(op, t, rng)
            if latency > OP_TIMEOUT_S:
                samples.error(op, t + OP_TIMEOUT_S, "timeout")
            elif (FAULT_AT <= t < PEERED and op == "write" and rng.random() < 0.05):
                samples.error(op, t + latency, "EIO")
            else:
                samples.success(op, t + latency, latency, 0 if op == "delete" else 4096)
        if second % 60 == 59 and second > 60:
            taken = samples.take_closed(second - 30, OPS)
            recorder.load_samples(taken)
            written += len(taken)
    taken = samples.take_final(LOAD_S, OPS)
    recorder.load_samples(taken)
    return written + len(taken)


def _ceph_state(t: float) -> tuple[str, dict[str, Any]]:
    """What the mons say `t` s into the load (the sampler's keys, CephState.as_dict)."""
    up, in_, checks, degraded, misplaced = 4, 4, (), 0, 0
    pgs = {"active+clean": NUM_PGS}
    if DOWN_SEEN <= t < OUT_AT:
        up, checks = 3, ("OSD_DOWN", "PG_DEGRADED")
        degraded = OBJECTS * 3 // 4
        if t < PEERED:
            pgs = {"peering": 40, "active+undersized+degraded": 80, "active+clean": 41}
        else:
            pgs = {"active+undersized+degraded": 120, "active+clean": 41}
    elif OUT_AT <= t < BACKFILLED:
        up, in_, checks = 3, 3, ("PG_DEGRADED",)
        left = 1 - (t - OUT_AT) / (BACKFILLED - OUT_AT)
        degraded = int(OBJECTS * 3 // 4 * left)
        misplaced = int(OBJECTS // 5 * left)
        moving = max(1, int(120 * left))
        pgs = {"active+undersized+degraded+remapped+backfilling": min(moving, 4),
               "active+undersized+degraded+remapped+backfill_wait": max(0, moving - 4),
               "active+clean": NUM_PGS - moving}
    elif BACKFILLED <= t < BACK_UP:
        up, in_ = 3, 3
    elif BACK_UP <= t < MOVED_BACK:
        left = 1 - (t - BACK_UP) / (MOVED_BACK - BACK_UP)
        misplaced = int(OBJECTS * 3 // 4 * left)
        moving = max(1, int(110 * left))
        pgs = {"active+remapped+backfilling": min(moving, 4),
               "active+remapped+backfill_wait": max(0, moving - 4),
               "active+clean": NUM_PGS - moving}
    if pgs.get("active+clean") and t % 97 < 3:  # a scrub now and then, as on the lab
        pgs = {**pgs, "active+clean": pgs["active+clean"] - 1, "active+clean+scrubbing": 1}
    health = "HEALTH_WARN" if checks else "HEALTH_OK"
    state = CephState(health=health, checks=checks, num_osds=4, num_up_osds=up,
                      num_in_osds=in_, num_pgs=NUM_PGS, pgs_by_state=pgs,
                      degraded_objects=degraded, misplaced_objects=misplaced)
    return health, state.as_dict()


def _journal(doc: dict[str, Any], start: float, times: dict[str, float],
             outputs: dict[str, Any], end: float, status: str = "completed") -> dict[str, Any]:
    """A Chaos Toolkit journal as `chaos run` stores it (what the control keeps)."""
    def result(activity: dict[str, Any], begun: float, ended: float) -> dict[str, Any]:
        return {"activity": activity, "status": "succeeded", "output": outputs.get(
            activity["name"], True), "start": _iso(begun), "end": _iso(ended),
            "duration": round(ended - begun, 3)}

    probe = doc["steady-state-hypothesis"]["probes"][0]
    method = [result(a, times[a["name"]] - 1.0, times[a["name"]]) for a in doc["method"]]
    rollbacks = [result(a, end - 3.0, end - 2.5) for a in doc.get("rollbacks", [])]
    return {
        "chaoslib-version": "1.42.0", "platform": "Linux-6.1.0-28-amd64-x86_64-with-glibc2.36",
        "node": "faultline-lab", "experiment": doc, "start": _iso(start), "status": status,
        "deviated": status == "deviated",
        "steady_states": {
            "before": {"steady_state_met": True, "probes": [result(probe, start, start + 2)]},
            "after": {"steady_state_met": status != "deviated",
                      "probes": [result(probe, end - 5, end - 3)]},
            "during": []},
        "run": method, "rollbacks": rollbacks, "end": _iso(end),
        "duration": round(end - start, 3)}


def make_hour_run(sessions: sessionmaker[Session], t0: float) -> tuple[int, int]:
    """The 1 h run, written as service.control writes a real one; (run id, load samples)."""
    rng = random.Random(6)
    doc = _experiment("ceph-kill-osd.json")
    workload = Workload(containers=2, objects_per_container=100, rate=RATE, ramp_s=5,
                        baseline_s=FAULT_AT - 5, duration_s=LOAD_S).as_dict()
    recorder = RunRecorder.create(sessions, title=doc["title"], cluster="lab-ceph",
                                  cluster_kind="ceph", workload=workload, load_api="rados",
                                  experiment_path="experiments/ceph-kill-osd.json")
    recorder.update(started_at=datetime.fromtimestamp(t0 - 100, UTC),
                    requested_by="operator-ana")
    recorder.cluster_samples([(t0 + s + 0.31, *_ceph_state(s)) for s in range(-95, 0)])
    recorder.event("prefilled", ts=t0 - 4, objects=200)
    recorder.update(load_started_ts=t0)
    recorder.event("load_started", ts=t0, rate=RATE)
    written = _load_samples(t0, recorder, rng)
    recorder.cluster_samples([(t0 + s + 0.31, *_ceph_state(s))
                              for s in range(0, LOAD_S + 15)])
    fault_ts, restore_ts = t0 + FAULT_AT, t0 + RESTORE_AT
    times = {"kill-osd": fault_ts, "self-healed-while-osd-dead": t0 + BACKFILLED + 12,
             "start-osd": restore_ts + 1.2, "healthy-with-every-osd-back": t0 + MOVED_BACK + 12}
    outputs = {"kill-osd": {"osd_id": 1, "node": "node2", "pid": 48213, "signal": "KILL",
                            "restore": "start-osd"},
               "start-osd": {"osd_id": 1, "node": "node2", "started": True}}
    for name, ts in times.items():
        activity = next(a for a in doc["method"] if a["name"] == name)
        recorder.event("activity", ts=ts, name=name, type=activity["type"],
                       status="succeeded", output=outputs.get(name, True))
        if name == "kill-osd":
            recorder.update(fault_ts=fault_ts)
            recorder.event("fault_injected", ts=fault_ts, name=name, output=outputs[name])
        if name == "start-osd":
            recorder.event("restored", ts=restore_ts, name=name, ended=restore_ts + 1.2)
    recorder.update(verify=VerifyResult(checked=200).as_dict())
    with sessions() as session:
        result = figures.compute(session, recorder.run_id)
    for key, kind in (("time_to_detect_s", "cluster_noticed"),
                      ("time_to_client_recovery_s", "client_recovered"),
                      ("time_to_full_redundancy_s", "fully_redundant")):
        if result.get(key) is not None:
            recorder.event(kind, ts=fault_ts + result[key])
    end = t0 + LOAD_S + 20
    recorder.finish("completed", figures=result,
                    journal=_journal(doc, t0 - 90, times, outputs, end))
    recorder.update(ended_at=datetime.fromtimestamp(end, UTC))
    return recorder.run_id, written


# --- 9,999 other runs --------------------------------------------------------------------

CLUSTERS = {"ceph": ["lab-ceph", "staging-ceph", "prod-ceph-a", "prod-ceph-b"],
            "swift": ["lab-swift", "staging-swift", "prod-swift-a"]}
STATUS_WEIGHTS = {"completed": 80, "deviated": 7, "failed": 6, "interrupted": 3,
                  "cancelled": 4}


def _figures(rng: random.Random, kind: str, rate: float) -> dict[str, Any]:
    ops = round(rate * rng.uniform(0.98, 1.01), 2)
    errors = rng.choice([0, 0, 0, rng.randint(1, 40)])
    out: dict[str, Any] = {
        "baseline_seconds": rng.randint(18, 20), "baseline_ops": ops,
        "baseline_mbps": round(ops * 0.95 * 4096 / 1e6, 4),
        "baseline_p50_ms": round(rng.uniform(1.5, 4), 3),
        "baseline_p99_ms": round(rng.uniform(8, 40), 3), "errors": errors,
        "errors_by_class": {"timeout": errors} if errors else {},
        "errors_by_op": {"read": errors} if errors else {},
        "throughput_drop": round(rng.uniform(0, 0.3), 4),
        "deficit_ops": rng.randint(0, 400), "deficit_s": round(rng.uniform(0, 20), 2),
        "worst_second_drop": round(rng.uniform(0.2, 1), 4),
        "time_to_detect_s": round(rng.uniform(0.5, 25), 3),
        "time_to_client_recovery_s": round(rng.uniform(2, 40), 3),
        "time_to_full_redundancy_s": round(rng.uniform(60, 300), 3) if kind == "ceph"
        else None,
        "time_to_full_redundancy_after_restore_s": round(rng.uniform(5, 120), 3),
        "restore_at_s": round(rng.uniform(30, 250), 3), "time_to_alert_s": None,
        "data_at_risk_s": round(rng.uniform(20, 300), 3), "lost_objects": 0,
        "corrupt_objects": 0, "verified_objects": rng.randint(150, 260),
        "unreadable_objects": 0}
    reasons = {"time_to_alert_s": "no alert about the cluster reached the service between "
                                  "the fault and the end of the run"}
    if out["time_to_full_redundancy_s"] is None:
        reasons["time_to_full_redundancy_s"] = (
            "Swift does not rebuild a down node's replicas elsewhere: not fully redundant "
            "before the restore")
    assert set(FIGURE_KEYS) <= set(out)
    return out | {"reasons": reasons}


def make_other_runs(sessions: sessionmaker[Session], count: int, newest: float) -> int:
    """`count` finished runs of the experiments under experiments/, oldest first, one every
    50 min up to `newest`, each with its figures, journal and timeline; inserted in bulk
    through the models (SQLAlchemy 2's ORM bulk INSERT). The number of events."""
    rng = random.Random(60)
    docs = {p.name: json.loads(p.read_text())
            for p in sorted((REPO / "experiments").glob("*.json"))}
    names = sorted(docs)
    statuses, weights = list(STATUS_WEIGHTS), list(STATUS_WEIGHTS.values())
    runs, timelines = [], []
    for i in range(count):
        name = names[i % len(names)]
        doc, kind = docs[name], name.split("-")[0]
        control = doc["controls"][0]["provider"]["arguments"]
        workload = Workload(**control.get("workload", {})).as_dict()
        status = rng.choices(statuses, weights)[0]
        started = newest - (count - i) * 3000.0
        load = started + rng.uniform(20, 60)
        fault = load + workload["ramp_s"] + workload["baseline_s"] + rng.uniform(0, 2)
        restore = fault + rng.uniform(30, 250)
        end = restore + rng.uniform(40, 200)
        queued = rng.random() < 0.6
        method = doc["method"]
        names_ = [a["name"] for a in method]
        fault_name = control.get("fault") or names_[0]
        restore_name = control.get("restore") or names_[-1]
        at = names_.index(fault_name)
        times = {n: fault + 20 * (k - at) - (workload["baseline_s"] if k < at else 0)
                 for k, n in enumerate(names_)}
        times[restore_name] = restore
        run: dict[str, Any] = {
            "title": doc["title"], "experiment_path": f"experiments/{name}",
            "cluster": rng.choice(CLUSTERS[kind][:2] if rng.random() < 0.7
                                  else CLUSTERS[kind]),
            "cluster_kind": kind, "load_api": "rados" if kind == "ceph" and
            "rgw" not in name else "swift", "status": status,
            "started_at": datetime.fromtimestamp(started, UTC),
            "ended_at": datetime.fromtimestamp(end, UTC), "load_started_ts": None,
            "fault_ts": None, "workload": workload, "figures": None, "verify": None,
            "journal": None, "error": None, "requested_by": None, "queued_at": None,
            "experiment": doc if queued else None, "inventory": None, "job_id": None}
        if queued:
            run.update(requested_by=rng.choice(["operator-ana", "operator-bo", "ci"]),
                       queued_at=datetime.fromtimestamp(started - rng.uniform(1, 30), UTC),
                       job_id=i + 1)
        events: list[tuple[float, str, dict[str, Any]]] = []
        if status == "cancelled":
            run.update(error="cancelled before it started", ended_at=run["started_at"])
            events.append((started, "cancel_requested", {"by": run["requested_by"]}))
        else:
            run.update(load_started_ts=load, fault_ts=fault,
                       figures=_figures(rng, kind, workload["rate"]),
                       verify=VerifyResult(checked=rng.randint(150, 260)).as_dict(),
                       journal=_journal(doc, started, times, {}, end,
                                        "completed" if status == "completed" else
                                        "deviated" if status == "deviated" else "failed"))
            if status == "failed":
                run["error"] = "FAULT NOT RESTORED: rollback start-osd failed"
            elif status == "interrupted":
                run["error"] = "alert CephOSDDown fired 45 s after the fault (abort_on)"
            events += [(load - 4, "prefilled", {"objects": 200}),
                       (load, "load_started", {"rate": workload["rate"]})]
            for a in method:
                events.append((times[a["name"]], "activity",
                               {"name": a["name"], "type": a["type"], "status": "succeeded",
                                "output": True}))
            if at:  # a fill first: the baseline follows it
                events.append((times[names_[at - 1]] + 0.5, "baseline_started", {}))
            events += [(fault, "fault_injected", {"name": fault_name}),
                       (restore, "restored", {"name": restore_name, "ended": restore + 1})]
            f = run["figures"]
            for key, kind_ in (("time_to_detect_s", "cluster_noticed"),
                               ("time_to_client_recovery_s", "client_recovered"),
                               ("time_to_full_redundancy_s", "fully_redundant")):
                if f[key] is not None:
                    events.append((fault + f[key], kind_, {}))
        runs.append(run)
        timelines.append(events)
    with sessions.begin() as session:
        ids = session.scalars(insert(Run).returning(Run.id, sort_by_parameter_order=True),
                              runs).all()
        rows = [{"run_id": run_id, "ts": ts, "kind": kind, "detail": detail}
                for run_id, events in zip(ids, timelines, strict=True)
                for ts, kind, detail in events]
        for i in range(0, len(rows), 10_000):
            session.execute(insert(Event), rows[i:i + 10_000])
    return len(rows)


def counts(sessions: sessionmaker[Session]) -> dict[str, int]:
    with sessions() as session:
        return {model.__tablename__: session.execute(select(func.count()).select_from(model))
                .scalar_one() for model in (Run, Event, LoadSample, ClusterSample)}


# --- serving and measuring ---------------------------------------------------------------

def log_in(base: str, name: str, password: str) -> requests.Session:
    """A browser's session after the login form: the CSRF token from the form, the cookie."""
    http = requests.Session()
    form = http.get(f"{base}/login", timeout=30)
    match = CSRF_TOKEN.search(form.text)
    if form.status_code != 200 or not match:
        fail(f"the login form did not come: HTTP {form.status_code}")
    done = http.post(f"{base}/login", data={"name": name, "password": password,
                                            "csrf_token": match.group(1)},
                     allow_redirects=False, timeout=30)
    if done.status_code != 302:
        fail(f"logging in failed: HTTP {done.status_code}")
    return http


def timed(http: requests.Session, url: str, check) -> tuple[list[float], int]:
    """Milliseconds of each of TIMED requests after WARMUP ones, and the response's size."""
    times, size = [], 0
    for i in range(WARMUP + TIMED):
        began = time.perf_counter()
        response = http.get(url, timeout=120)
        body = response.content
        elapsed = (time.perf_counter() - began) * 1000
        if response.status_code != 200 or response.url != url:
            fail(f"GET {url}: HTTP {response.status_code} at {response.url}")
        check(response)
        if i >= WARMUP:
            times.append(elapsed)
        size = len(body)
    return times, size


def row(what: str, times: list[float], size: int, detail: dict[str, Any]) -> Row:
    value = percentile(times, 95)
    met = value <= TARGET_MS
    return Row(id="P6", what=what, value=round(value, 1), unit="ms", target=TARGET, met=met,
               gap="" if met else f"p95 {value:.0f} ms over {TARGET_MS:.0f} ms",
               detail={"p95_ms": round(value, 1), "median_ms": round(statistics.median(times), 1),
                       "max_ms": round(max(times), 1), "min_ms": round(min(times), 1),
                       "requests": len(times), "warmup": WARMUP, "response_bytes": size,
                       "load_average": [round(x, 2) for x in os.getloadavg()], **detail})


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    started_server = pgserver.ensure_running()
    url = fresh_database()
    try:
        sessions = db.session_factory(url)
        began = time.monotonic()
        now = time.time()
        events = make_other_runs(sessions, RUNS - 1, newest=now - 3 * 3600)
        run_id, load_samples = make_hour_run(sessions, t0=now - 2 * 3600)
        generated_s = round(time.monotonic() - began, 1)
        stored = counts(sessions)
        print(f"P6: generated in {generated_s} s: {stored} ({events} events of the other runs,"
              f" {load_samples} load samples of run {run_id})", flush=True)
        if stored["runs"] != RUNS:
            fail(f"{stored['runs']} runs stored, not {RUNS}")
        name, password = f"viewer-{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
        with sessions.begin() as session:
            accounts.create_user(session, name, "viewer", password)
        app = create_app({"DATABASE_URL": url, "SECRET_KEY": uuid.uuid4().hex})
        common = {"database": DATABASE, "generated_s": generated_s, "rows": stored,
                  "cpus": os.cpu_count()}
        with sessions() as session:
            hour = {"run_id": run_id, "load_samples": session.execute(
                select(func.count()).where(LoadSample.run_id == run_id)).scalar_one(),
                "cluster_samples": session.execute(
                select(func.count()).where(ClusterSample.run_id == run_id)).scalar_one(),
                "events": session.execute(
                select(func.count()).where(Event.run_id == run_id)).scalar_one(),
                "figures": {k: v for k, v in session.get(Run, run_id).figures.items()
                            if k in ("baseline_ops", "baseline_p99_ms", "errors",
                                     "time_to_detect_s", "time_to_client_recovery_s",
                                     "time_to_full_redundancy_s",
                                     "time_to_full_redundancy_after_restore_s")}}
        with served(app) as base:
            http = log_in(base, name, password)

            def run_page(response):
                if f"Run {run_id}:" not in response.text or "time_to_detect_s" not in \
                        response.text:
                    fail(f"/runs/{run_id} is not the run page")

            def series(response):
                data = response.json()
                if len(data["load"]) != LOAD_S or len(data["cluster"]) < LOAD_S or \
                        sum(p["p99_ms"] is not None for p in data["load"]) < LOAD_S - 60:
                    fail(f"series.json has {len(data['load'])} load and "
                         f"{len(data['cluster'])} cluster points")

            def runs_list(response):
                if f"{RUNS:,} runs".replace(",", "") not in response.text.replace(",", "") \
                        or response.text.count('name="runs" value=') != 50:
                    fail("/ is not the first page of the 10,000 runs")

            rows = []
            for what, path, check, extra in (
                    (f"run page of a 1 h run at 1 s samples (GET /runs/{run_id})",
                     f"/runs/{run_id}", run_page, hour),
                    (f"its chart data, loaded by the page (GET /runs/{run_id}/series.json)",
                     f"/runs/{run_id}/series.json", series, hour),
                    (f"runs list, first page, {RUNS:,} runs in the database (GET /)",
                     "/", runs_list, {"per_page": 50})):
                times, size = timed(http, base + path, check)
                rows.append(row(what, times, size, {"path": path, **extra, **common}))
                print(f"P6: {path}: median {statistics.median(times):.1f} ms, p95 "
                      f"{percentile(times, 95):.1f} ms", flush=True)
    finally:
        drop_database(url)
        if started_server:
            stop_server_if_unused()
    report(rows, args.json)


if __name__ == "__main__":
    main()
