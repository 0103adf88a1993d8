"""What the dashboard's views share: the database sessions, the job queue (the API's
handle: `with queue_app() as app:`), the inventory
and the experiment catalogue of the app, and who may do what in a template.

Configuration keys (create_app's config): DATABASE_URL; INVENTORY (default
FAULTLINE_INVENTORY or the lab's inventory); EXPERIMENTS_DIR (default FAULTLINE_EXPERIMENTS
or the repository's experiments/).
"""

from __future__ import annotations

import os
from pathlib import Path

from flask import Flask, current_app
from flask_login import current_user
from sqlalchemy.orm import Session, sessionmaker

from clusters.inventory import Cluster, load_inventory
from clusters.paths import default_inventory

from ..accounts.roles import role_at_least
from ..api.context import queue_app  # noqa: F401  (one queue handle for the whole app)
from ..experiment_catalogue import DEFAULT_DIR


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


def init_app(app: Flask) -> None:
    app.jinja_env.globals["may"] = may
