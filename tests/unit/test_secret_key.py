"""The web app's secret key: from FAULTLINE_SECRET_KEY, else made once and kept, mode 0600."""

from __future__ import annotations

import stat

import pytest

from service.web.secret import secret_key


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FAULTLINE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FAULTLINE_SECRET_KEY", raising=False)
    return tmp_path / "home"


def test_without_the_variable_a_key_is_made_once_and_kept_readable_by_the_owner_only(home):
    key = secret_key()

    path = home / "secret_key"
    assert len(key) == 64
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secret_key() == key
    assert [p.name for p in home.iterdir()] == ["secret_key"]  # no temporary file left


def test_the_variable_wins_and_nothing_is_written(home, monkeypatch):
    monkeypatch.setenv("FAULTLINE_SECRET_KEY", "from the environment")

    assert secret_key() == "from the environment"
    assert not home.exists()
