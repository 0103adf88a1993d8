"""The worker's queue app: the job queue's app (service.jobs.app) with Faultline's tasks."""

from __future__ import annotations

import procrastinate

from service.jobs.app import make_app
from service.jobs.names import NAMESPACE

from . import tasks


def make_worker_app(url: str | None = None) -> procrastinate.App:
    app = make_app(url)
    app.add_tasks_from(tasks.blueprint(), namespace=NAMESPACE)
    return app
