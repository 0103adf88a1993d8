"""The Faultline Chaos Toolkit control, under its public path: every experiment file (and
every experiment stored in PostgreSQL) names `service.control` in its `controls`. The
control itself is service.runs.control, its hooks service.runs.hooks; Chaos Toolkit looks
the hooks up by name here."""

from __future__ import annotations

from service.runs.hooks import (
    after_activity_control,
    after_experiment_control,
    before_activity_control,
    before_experiment_control,
    before_method_control,
)

__all__ = ["before_experiment_control", "before_method_control", "before_activity_control",
           "after_activity_control", "after_experiment_control"]
