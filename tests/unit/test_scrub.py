"""Secrets scrubbed from journals and logs (service.store.scrub), the database password
kept in a passfile (service.store.passfile), and what a run's process is given
(service.runs.environment)."""

from __future__ import annotations

import logging
import stat
import sys

import pytest

from service.runs.environment import process_environment
from service.store import passfile
from service.store.scrub import ScrubbingFormatter, known_secrets, scrub, scrub_json

URL = "postgresql+psycopg://faultline:s3cr:et\\pw@db.example:5433/faultline"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FAULTLINE_HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize(("text", "scrubbed"), [
    ("connect to postgresql://faultline:hunter22@127.0.0.1:5432/x failed",
     "connect to postgresql://faultline:***@127.0.0.1:5432/x failed"),
    ("amqp://:p4ss@host/", "amqp://:***@host/"),
    ("no password in postgresql://faultline@127.0.0.1/x", "no password in "
     "postgresql://faultline@127.0.0.1/x"),
    ("the key is 0123456789abcdef, twice 0123456789abcdef", "the key is ***, twice ***"),
])
def test_url_passwords_and_known_secrets_are_scrubbed(text, scrubbed):
    assert scrub(text, {"0123456789abcdef"}) == scrubbed


def test_the_secrets_known_are_named_like_secrets_or_kept_in_faultline_s_files(home):
    (home / "secret_key").write_text("the-session-key-on-disk\n")
    environ = {"FAULTLINE_ALERT_TOKEN": "alert-token-value", "MY_API_KEY": "k-123456",
               "SWIFT_PASSWORD": "swiftpass", "HOME": "/root-is-no-secret",
               "SHORT_TOKEN": "1", "DATABASE_URL": "postgresql://u:dbpassword@h/d"}

    assert known_secrets(environ) == {"the-session-key-on-disk", "alert-token-value",
                                      "k-123456", "swiftpass", "dbpassword"}


def test_a_journal_is_scrubbed_at_every_depth():
    journal = {"run": [{"output": {"stdout": "DATABASE_URL=postgresql://u:pw123456@h/d\n"}}],
               "experiment": {"configuration": {"k": "tok-abcdef"}}, "status": "completed",
               "duration": 1.5}

    assert scrub_json(journal, {"tok-abcdef"}) == {
        "run": [{"output": {"stdout": "DATABASE_URL=postgresql://u:***@h/d\n"}}],
        "experiment": {"configuration": {"k": "***"}}, "status": "completed",
        "duration": 1.5}


def test_a_log_line_and_its_traceback_are_scrubbed(monkeypatch):
    monkeypatch.setenv("FAULTLINE_SECRET_KEY", "session-key-123")
    formatter = ScrubbingFormatter("%(message)s")
    try:
        raise RuntimeError("key session-key-123 leaked")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1,
                                   "url %s", ("postgresql://u:pw123456@h/d",), True)
        record.exc_info = sys.exc_info()

    line = formatter.format(record)

    assert "session-key-123" not in line and "pw123456" not in line
    assert line.startswith("url postgresql://u:***@h/d\n")
    assert "RuntimeError: key *** leaked" in line


def test_the_database_password_goes_in_a_private_passfile_not_the_url(home):
    bare, extra = passfile.without_password(URL)

    assert bare == "postgresql+psycopg://faultline@db.example:5433/faultline"
    path = home / "pgpass" / extra["PGPASSFILE"].rsplit("/", 1)[1]
    assert extra == {"PGPASSFILE": str(path)}
    assert path.read_text() == "db.example:5433:faultline:faultline:s3cr\\:et\\\\pw\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert passfile.passwords(str(path)) == ["s3cr:et\\pw"]


def test_a_url_without_a_password_is_given_as_it_is():
    assert passfile.without_password("postgresql://u@h/d") == ("postgresql://u@h/d", {})


def test_a_run_process_gets_no_session_key_alert_token_nor_database_password():
    environ = {"FAULTLINE_SECRET_KEY": "k", "FAULTLINE_ALERT_TOKEN": "t", "PGPASSWORD": "p",
               "FAULTLINE_HOME": "/srv/faultline", "SWIFT_KEY": "kept: a run may need it",
               "DATABASE_URL": URL}

    env = process_environment(URL, environ)

    assert set(env) == {"FAULTLINE_HOME", "SWIFT_KEY", "DATABASE_URL", "PGPASSFILE"}
    assert env["DATABASE_URL"] == "postgresql+psycopg://faultline@db.example:5433/faultline"
    assert "s3cr" not in repr(env)
