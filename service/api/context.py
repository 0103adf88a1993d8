"""What the API's views take from the Flask app: the database sessions, the inventory, the
experiments directory, the job queue, and who is asking.

Configuration (app.config): INVENTORY (default: FAULTLINE_INVENTORY or the lab's),
EXPERIMENTS_DIR (default: the repository's experiments/).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import procrastinate
from flask import Flask, current_app
from flask_login import current_user
from sqlalchemy.orm import Session, sessionmaker

from .. import queue
from ..experiment_store import default_directory

QUEUE = "faultline.queue"


@dataclass(frozen=True)
class QueueHandle:
    """The Flask app's procrastinate app, made once. run_queue opens and closes it around
    each use, which two request threads must not interleave: hence the lock."""

    app: procrastinate.App
    lock: threading.Lock


def sessions() -> sessionmaker[Session]:
    return current_app.extensions["faultline.sessions"]


def inventory() -> str | None:
    return current_app.config.get("INVENTORY")


def experiments_dir() -> Path:
    return Path(current_app.config.get("EXPERIMENTS_DIR") or default_directory())


def user_name() -> str | None:
    return getattr(current_user, "name", None)


@contextmanager
def queue_app() -> Iterator[procrastinate.App]:
    handle: QueueHandle = current_app.extensions[QUEUE]
    with handle.lock:
        yield handle.app


def init_app(app: Flask) -> None:
    app.config.setdefault("INVENTORY", None)
    app.config.setdefault("EXPERIMENTS_DIR", None)
    app.extensions[QUEUE] = QueueHandle(queue.make_app(app.config["DATABASE_URL"]),
                                        threading.Lock())
