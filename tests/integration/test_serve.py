"""`faultline serve`: the dashboard behind gunicorn, on the test database. A user logs in
through it, and SIGTERM stops it cleanly."""

from __future__ import annotations

import signal
import socket
import subprocess
import time

import requests
from web_login import SECRET, csrf_token


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_logs_a_user_in_and_stops_on_sigterm(env, make_user, tmp_path):
    port = _free_port()
    name, password = make_user("viewer")
    server = subprocess.Popen(
        ["faultline", "serve", "--port", str(port), "--threads", "4"],
        env={**env, "FAULTLINE_SECRET_KEY": SECRET, "FAULTLINE_HOME": str(tmp_path)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                assert requests.get(f"{url}/healthz", timeout=2).status_code == 200
                break
            except requests.ConnectionError:
                assert server.poll() is None, server.stderr.read()
                assert time.monotonic() < deadline, "faultline serve never answered"
                time.sleep(0.2)
        browser = requests.Session()
        assert browser.get(f"{url}/", allow_redirects=False).status_code in (302, 401)
        form = browser.get(f"{url}/login").text
        done = browser.post(f"{url}/login", data={"name": name, "password": password,
                                                  "csrf_token": csrf_token(form)})
        assert done.status_code == 200
        page = browser.get(f"{url}/")
        assert page.status_code == 200 and name in page.text
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            returncode = server.wait(timeout=30)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
    log = server.stderr.read()
    assert "gunicorn" in log.lower() and "Booting worker" in log, log
    assert returncode == 0, log
