"""docker-compose.yml, checked as far as this machine allows (no Docker engine here): it
parses, every service has an image or a build context that exists, every file it mounts is
in the repository (or under ./deploy, the user's), the web service's port, the database
URL and the Prometheus and Alertmanager targets agree with each other and with the app,
and promtool and amtool accept the configs as the containers see them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

from service.store import db

REPO = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def test_every_service_has_an_image_or_a_build_context_that_exists():
    assert set(SERVICES) == {"postgres", "web", "worker", "prometheus", "alertmanager"}
    for name, service in SERVICES.items():
        assert "image" in service or "build" in service, name
        if "build" in service:
            context = REPO / service["build"]
            assert (context / "Dockerfile").is_file(), name
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "python3-rados" in dockerfile and "--system-site-packages" in dockerfile


def test_mounted_files_exist_and_named_volumes_are_declared():
    for name, service in SERVICES.items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("./deploy"):
                continue  # the user's inventory, keys and tokens
            if source.startswith("./"):
                assert (REPO / source).exists(), (name, source)
            else:
                assert source in COMPOSE["volumes"], (name, source)


def test_the_web_service_and_the_worker_agree_with_the_app_and_the_database():
    web, worker, postgres = SERVICES["web"], SERVICES["worker"], SERVICES["postgres"]
    assert web["ports"] == ["8080:8080"]
    assert web["command"][:2] == ["faultline", "serve"]
    assert web["command"][web["command"].index("--port") + 1] == "8080"
    assert web["command"][web["command"].index("--host") + 1] == "0.0.0.0"
    assert worker["command"] == ["faultline", "worker"]
    for service in (web, worker):
        env = service["environment"]
        url = env["DATABASE_URL"].replace("${POSTGRES_PASSWORD:-faultline}", "faultline")
        # the app takes postgresql:// as psycopg 3, at the compose service's name
        assert db.libpq_url(re.sub(r"^postgresql://", "postgresql+psycopg://", url)) == (
            f"postgresql://{postgres['environment']['POSTGRES_USER']}:faultline@postgres:5432/"
            f"{postgres['environment']['POSTGRES_DB']}")
        assert "FAULTLINE_INVENTORY" in env
        assert any(v.endswith(":/etc/faultline:ro") for v in service["volumes"])
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_only_the_web_service_holds_the_session_key_and_the_alert_token():
    """Issue 25: in compose the worker held the session key and the alert token, which an
    experiment reading its environment could echo; runs need neither."""
    secrets = {"FAULTLINE_SECRET_KEY", "FAULTLINE_ALERT_TOKEN"}
    assert secrets <= set(SERVICES["web"]["environment"])
    assert not secrets & set(SERVICES["worker"]["environment"])


def test_prometheus_and_alertmanager_configs_pass_their_checks_as_mounted(tmp_path):
    prometheus = tmp_path / "prometheus"
    shutil.copytree(REPO / "dashboards" / "prometheus" / "rules", prometheus / "rules")
    config = REPO / "dashboards" / "prometheus" / "prometheus-compose.yml"
    token = SERVICES["prometheus"]["volumes"][2].split(":")[1]  # as mounted in the container
    assert token == "/etc/prometheus/secrets/prometheus-token"
    (prometheus / "prometheus-token").write_text("token\n")
    shutil.copy(config, prometheus / "prometheus.yml")
    mounted = (prometheus / "prometheus.yml").read_text().replace(
        token, str(prometheus / "prometheus-token"))
    (prometheus / "prometheus.yml").write_text(mounted)
    checked = subprocess.run(["promtool", "check", "config", str(prometheus / "prometheus.yml")],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    scrape = yaml.safe_load(config.read_text())
    assert scrape["scrape_configs"][0]["static_configs"][0]["targets"] == ["web:8080"]
    assert scrape["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == [
        "alertmanager:9093"]

    routes = REPO / "dashboards" / "alertmanager" / "alertmanager-compose.yml"
    checked = subprocess.run(["amtool", "check-config", str(routes)], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    demo = yaml.safe_load((REPO / "dashboards" / "alertmanager" / "alertmanager.yml").read_text())
    compose = yaml.safe_load(routes.read_text())
    hook = compose["receivers"][0]["webhook_configs"][0]
    assert hook["url"] == "http://web:8080/api/v1/alerts"
    demo["receivers"][0]["webhook_configs"][0]["url"] = hook["url"]
    assert compose == demo  # the same routes as the embedded Alertmanager's


def test_prometheus_and_alertmanager_are_published_on_the_loopback_only():
    """Issue 25, "Monitoring": compose published Prometheus (9090) and Alertmanager (9093)
    on every interface, without authentication; anyone reaching Alertmanager could silence
    the alerts that abort runs or inject one that aborts them."""
    for name, port in (("prometheus", 9090), ("alertmanager", 9093)):
        assert SERVICES[name]["ports"] == [f"127.0.0.1:{port}:{port}"], name
        assert SERVICES[name].get("network_mode") != "host", name
    # the services reach them by name over compose's own network
    for service in (SERVICES["web"], SERVICES["worker"]):
        assert service["environment"]["FAULTLINE_ALERTMANAGER_URL"] == "http://alertmanager:9093"
    # every other published port names its interface or is the dashboard's
    published = [p for s in SERVICES.values() for p in s.get("ports", [])]
    assert [p for p in published if not p.startswith("127.0.0.1:")] == ["8080:8080"]
