"""What the API's views take from the Flask app: the database sessions, the inventory, the
experiments directory, the job queue, and who is asking.

Configuration (app.config): INVENTORY (default: FAULTLINE_INVENTORY or the lab's),
EXPERIMENTS_DIR (default: the repository's experiments/).
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, current_app
from flask_login import current_user

from service.experiments.library import default_directory

from ..context import queue_app, sessions  # noqa: F401  (one of each for the whole app)


def inventory() -> str | None:
    return current_app.config.get("INVENTORY")


def experiments_dir() -> Path:
    return Path(current_app.config.get("EXPERIMENTS_DIR") or default_directory())


def user_name() -> str | None:
    return getattr(current_user, "name", None)


def user_role() -> str | None:
    return getattr(current_user, "role", None)


def init_app(app: Flask) -> None:
    app.config.setdefault("INVENTORY", None)
    app.config.setdefault("EXPERIMENTS_DIR", None)
