"""The embedded Prometheus and Alertmanager: Debian's packages, on loopback, with their data
and configs under $FAULTLINE_HOME/monitoring, known only through their pid files.

Prometheus' scrape config is written here (it depends on where the service listens): the
service's /metrics, and through the service's HTTP service discovery the load drivers of
the runs going on, each Ceph cluster's mgr prometheus module and each Swift cluster's recon
as the service exports it. The clusters come from the service's inventory at every refresh
(service.monitoring.cluster_targets): a lab brought up after Prometheus is scraped within
5 s, with no reload. The alert rules and the Alertmanager
config are the files of dashboards/, as users would take them; only the service's URL in
the Alertmanager webhook is set to where this service listens.

Prometheus runs without `--web.enable-lifecycle`: its /-/reload and /-/quit would let any
local account stop it (and with it the alerts that abort runs). A running daemon reloads its
config on SIGHUP, sent to the PID of its pid file (Alertmanager too).

Prometheus reaches the service with the API token of a viewer `prometheus`; Alertmanager
posts to the webhook with the shared alert token (service.alert_token). Both files are
0600 in the config directory and referenced as credentials files, never inlined.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from clusters.paths import state_dir
from lab import procs

from .exceptions import MonitoringError

REPO = Path(__file__).resolve().parents[2]
DASHBOARDS = REPO / "dashboards"
PROMETHEUS_PORT = 9390  # not 9090/9093: the machine may run its own
ALERTMANAGER_PORT = 9393
PROGRAMS = {"prometheus": "prometheus", "alertmanager": "prometheus-alertmanager"}
# each daemon's gauge of its last successful config reload (Unix seconds)
RELOADED = {"prometheus": "prometheus_config_last_reload_success_timestamp_seconds",
            "alertmanager": "alertmanager_config_last_reload_success_timestamp_seconds"}
DEMO_SERVICE_URL = "http://127.0.0.1:8080"  # what dashboards/alertmanager/alertmanager.yml names


def home() -> Path:
    return state_dir() / "monitoring"


def prometheus_url() -> str:
    return f"http://127.0.0.1:{PROMETHEUS_PORT}"


def alertmanager_url() -> str:
    return f"http://127.0.0.1:{ALERTMANAGER_PORT}"


def prometheus_config(service_url: str) -> dict:
    """The scrape config: the service, its drivers, and every cluster of its inventory."""
    service = urlsplit(service_url).netloc
    # type explicit: Prometheus 2.42's http_sd_config sends the bare token without it (401)
    token = {"type": "Bearer",
             "credentials_file": str(home() / "config" / "secrets" / "prometheus-token")}

    def discovered(path: str) -> list[dict]:
        return [{"url": f"{service_url.rstrip('/')}{path}", "refresh_interval": "5s",
                 "authorization": token}]
    return {
        "global": {"scrape_interval": "5s", "evaluation_interval": "5s"},
        "rule_files": ["rules/*.yml"],
        "alerting": {"alertmanagers": [{"static_configs": [
            {"targets": [f"127.0.0.1:{ALERTMANAGER_PORT}"]}]}]},
        "scrape_configs": [
            {"job_name": "faultline", "authorization": token,
             "static_configs": [{"targets": [service]}]},
            {"job_name": "faultline-drivers",
             "http_sd_configs": discovered("/prometheus/targets")},
            # the mgr's own labels win (honor_labels); the token goes to the service only
            {"job_name": "ceph", "honor_labels": True,
             "http_sd_configs": discovered("/prometheus/clusters?kind=ceph")},
            {"job_name": "swift", "authorization": token, "scrape_timeout": "5s",
             "http_sd_configs": discovered("/prometheus/clusters?kind=swift")},
        ],
    }


def write_configs(service_url: str, prometheus_token: str, alert_token: str) -> Path:
    """The config directory of both daemons; returns it."""
    config = home() / "config"
    (config / "rules").mkdir(parents=True, exist_ok=True)
    (config / "secrets").mkdir(mode=0o700, exist_ok=True)
    for name, value in (("prometheus-token", prometheus_token), ("alert-token", alert_token)):
        path = config / "secrets" / name
        path.touch(mode=0o600)
        path.write_text(value + "\n")
    for rules in sorted((DASHBOARDS / "prometheus" / "rules").glob("*.yml")):
        shutil.copyfile(rules, config / "rules" / rules.name)
    (config / "prometheus.yml").write_text(
        yaml.safe_dump(prometheus_config(service_url), sort_keys=False))
    routes = (DASHBOARDS / "alertmanager" / "alertmanager.yml").read_text()
    (config / "alertmanager.yml").write_text(
        routes.replace(DEMO_SERVICE_URL, service_url.rstrip("/")))
    return config


def check_configs(config: Path) -> None:
    """promtool and amtool, as a user would before starting them."""
    for argv in (["promtool", "check", "config", str(config / "prometheus.yml")],
                 ["amtool", "check-config", str(config / "alertmanager.yml")]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise MonitoringError(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")


def _daemons(config: Path) -> dict[str, tuple[list[str], str]]:
    data = home() / "data"
    return {
        "prometheus": ([
            "prometheus", f"--config.file={config / 'prometheus.yml'}",
            f"--storage.tsdb.path={data / 'prometheus'}", "--storage.tsdb.retention.time=30d",
            f"--web.listen-address=127.0.0.1:{PROMETHEUS_PORT}"],
            f"{prometheus_url()}/-/ready"),
        "alertmanager": ([
            "prometheus-alertmanager", f"--config.file={config / 'alertmanager.yml'}",
            f"--storage.path={data / 'alertmanager'}",
            f"--web.listen-address=127.0.0.1:{ALERTMANAGER_PORT}",
            "--cluster.listen-address="],  # one instance: no gossip port
            f"{alertmanager_url()}/-/ready"),
    }


def _pid_file(name: str) -> Path:
    return home() / "run" / f"{name}.pid"


def up(service_url: str, prometheus_token: str, alert_token: str) -> dict:
    """Start both (or reload a running one's config); return their URLs."""
    config = write_configs(service_url, prometheus_token, alert_token)
    check_configs(config)
    for sub in ("run", "log", "data/prometheus", "data/alertmanager"):
        (home() / sub).mkdir(parents=True, exist_ok=True)
    for name, (argv, ready_url) in _daemons(config).items():
        pid_file = _pid_file(name)
        pid = procs.alive_pid(pid_file, PROGRAMS[name])
        if pid is None:
            with open(home() / "log" / f"{name}.log", "ab") as log:
                process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                           stderr=log, start_new_session=True)
            pid_file.write_text(f"{process.pid}\n")
        else:
            _reload(name, pid, ready_url)
        _wait_ready(name, ready_url)
    return {"prometheus": prometheus_url(), "alertmanager": alertmanager_url()}


def _reload(name: str, pid: int, ready_url: str, timeout_s: float = 30.0) -> None:
    """SIGHUP the daemon (both reload their config on it) and wait until its metrics say a
    reload succeeded since: no HTTP lifecycle API is needed."""
    metric = RELOADED[name]
    since = _reloaded_at(ready_url, metric)
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        at = _reloaded_at(ready_url, metric)
        if at is not None and (since is None or at > since):
            return
        time.sleep(0.2)
    raise MonitoringError(f"{name} did not reload its config within {timeout_s:.0f} s of "
                          f"SIGHUP; see {home() / 'log' / (name + '.log')}")


def _reloaded_at(ready_url: str, metric: str) -> float | None:
    """The daemon's last successful config reload (a Unix time from its /metrics)."""
    try:
        with urllib.request.urlopen(ready_url.replace("/-/ready", "/metrics"),  # noqa: S310
                                    timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(metric + " "):
            return float(line.split()[1])
    return None


def _wait_ready(name: str, url: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if procs.alive_pid(_pid_file(name), PROGRAMS[name]) is None:
            raise MonitoringError(f"{name} exited; see {home() / 'log' / (name + '.log')}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise MonitoringError(f"{name} not ready after {timeout_s:.0f} s at {url}")


def down(remove_data: bool = False) -> dict[str, str]:
    """Stop both; with remove_data, delete their stored series and silences too."""
    out = {name: procs.stop(_pid_file(name), program=PROGRAMS[name])
           for name in PROGRAMS}
    if remove_data:
        shutil.rmtree(home() / "data", ignore_errors=True)
    return out


def status() -> dict[str, int | None]:
    return {name: procs.alive_pid(_pid_file(name), program) for name, program in PROGRAMS.items()}
