"""answers_healthcheck reaches only where the inventory says a Swift server listens.

Exploit played: issue 25's "`actions.swift.answers_healthcheck` aimed at any address, which
makes a blind port scan": an operator uploads an experiment whose probe names an address
and a port. The upload is refused with one message and nothing is stored.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from service.store.models import UploadedExperiment

REPO = Path(__file__).resolve().parents[2]
KILL_SERVER = json.loads((REPO / "experiments" / "swift-kill-object-server.json").read_text())
SCAN = {"type": "probe", "name": "scan", "tolerance": True,
        "provider": {"type": "python", "module": "actions.swift", "func": "answers_healthcheck",
                     "arguments": {"address": "10.0.0.1", "port": 22}}}


def _uploads(sessions) -> int:
    with sessions() as session:
        return session.execute(select(func.count(UploadedExperiment.id))).scalar_one()


@pytest.mark.parametrize("where", ["method", "rollbacks"])
def test_answers_healthcheck_aimed_at_an_address_is_refused_at_upload(api_as, sessions, where):
    document = copy.deepcopy(KILL_SERVER)
    document[where] = [*document.get(where, []), SCAN]
    before = _uploads(sessions)

    response = api_as("operator").post("/api/v1/experiments",
                                       json={"name": f"scan-{where}", "experiment": document})

    assert response.status_code == 400, response.json
    # chaoslib's check of the call against the signature, or the upload allow-list's
    assert "'address'" in response.json["error"] or "answers_healthcheck" in \
        response.json["error"], response.json
    assert _uploads(sessions) == before
