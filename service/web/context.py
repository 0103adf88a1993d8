"""What the dashboard's views and the API share: the database sessions, the job queue
(`with queue_app() as app:`), the inventory
and the experiment catalogue of the app, and who may do what in a template.

Configuration keys (create_app's config): DATABASE_URL; INVENTORY (default
FAULTLINE_INVENTORY or the lab's inventory); EXPERIMENTS_DIR (default FAULTLINE_EXPERIMENTS
or the repository's experiments/).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import procrastinate
from flask import Flask, current_app
from flask_login import current_user
from sqlalchemy.orm import Session, sessionmaker

from clusters.access.inventory import Cluster, load_inventory
from clusters.paths import default_inventory
from service.accounts.roles import role_at_least
from service.experiments.catalogue import DEFAULT_DIR
from service.jobs.app import make_app

QUEUE = "faultline.queue"


@dataclass(frozen=True)
class QueueHandle:
    """The Flask app's procrastinate app, made once. run_queue opens and closes it around
    each use, which two request threads must not interleave: hence the lock."""

    app: procrastinate.App
    lock: threading.Lock


def sessions() -> sessionmaker[Session]:
    return current_app.extensions["faultline.sessions"]


def inventory() -> str:
    return str(current_app.config.get("INVENTORY") or default_inventory())


def clusters() -> dict[str, Cluster]:
    """The inventory's clusters (InventoryError when it is missing or malformed)."""
    return load_inventory(inventory())


def experiments_dir() -> Path:
    return Path(current_app.config.get("EXPERIMENTS_DIR")
                or os.environ.get("FAULTLINE_EXPERIMENTS") or DEFAULT_DIR)


def may(role: str) -> bool:
    """Whether the current user has at least `role` (for showing buttons; the access policy
    enforces it on the request anyway)."""
    return bool(current_user.is_authenticated and role_at_least(current_user.role, role))


@contextmanager
def queue_app() -> Iterator[procrastinate.App]:
    """The app's one queue handle, for the pages and the API alike."""
    handle: QueueHandle = current_app.extensions[QUEUE]
    with handle.lock:
        yield handle.app


def init_app(app: Flask) -> None:
    app.jinja_env.globals["may"] = may
    app.extensions[QUEUE] = QueueHandle(make_app(app.config["DATABASE_URL"]), threading.Lock())
