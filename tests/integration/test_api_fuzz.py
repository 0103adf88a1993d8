"""The JSON API under Schemathesis: every check, once with a viewer's token and once with an
operator's, against the real app served over HTTP on a real database.

Schemathesis reads the OpenAPI document the app serves and sends what it allows (and what
it forbids): the answers must be documented, of the documented shape, never a 500, and a
request the document forbids must be refused. Settings (why a 400 counts as acceptance for
five operations) are in schemathesis.toml beside this file; the stored runs it reads are
added by the test.

Nothing here starts real work: the API only queues runs and heals, no worker takes them in
this test, and the inventory's clusters are on addresses nothing answers. What the fuzzing
stored (runs, schedules, uploads, queued jobs) is deleted afterwards. The output is kept
in tests/artifacts/schemathesis-ROLE.txt.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from factories import delete_made_by, make_run
from serving import served
from sqlalchemy import delete, func, select, text

from service.store.models import Run

HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE.parent / "artifacts"
SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
# fixed, so that a failure in CI replays the same requests; FAULTLINE_FUZZ_SEED explores others
SEED = os.environ.get("FAULTLINE_FUZZ_SEED", "20261125")
EXAMPLES = os.environ.get("FAULTLINE_FUZZ_EXAMPLES", "40")


# the stored runs for the operations that read one, so that they answer from data rather
# than 404 (numbers, not text from the environment, which the check would call a wrong type)
READING = """
[[operations]]
include-operation-id = ["get_run", "run_figures", "run_samples", "run_events", "run_journal"]
parameters = {{ run_id = {0} }}

[[operations]]
include-operation-id = ["compare_runs"]
parameters = {{ runs = [{0}, {1}] }}
"""


@pytest.fixture
def stored_runs(sessions):
    """Two finished runs with samples, events, figures and a journal for the reading
    operations. Without a journal, a stateful step that created a run and then read "its"
    journal (run_id is set to the first of these below) got a 404, which Schemathesis calls
    a created resource not found (a clean-clone `make test`, session 15)."""
    with sessions() as session:
        runs = [make_run(session, dip_ops=20), make_run(session, kind="swift", dip_ops=50)]
        for run in runs:
            run.journal = {"status": "completed", "deviated": False, "run": [],
                           "rollbacks": []}
        session.commit()
        ids = [run.id for run in runs]
    yield ids
    with sessions.begin() as session:
        session.execute(delete(Run).where(Run.id.in_(ids)))


def _delete_what_the_fuzzing_made(sessions, user: str, last_job: int) -> None:
    delete_made_by(sessions, [user])
    with sessions.begin() as session:  # the heals it queued too, which name no user
        session.execute(text("DELETE FROM procrastinate_jobs WHERE id > :last"),
                        {"last": last_job})


# the viewer's pass (73 s) in the full selection: what a viewer may not do is refused in
# make test by test_auth_every_mutation, and the operator's pass sends every operation
@pytest.mark.parametrize("role", [pytest.param("viewer", marks=[pytest.mark.full]),
                                  "operator"])
def test_schemathesis_finds_no_failure(role, api_app, api_token, sessions, stored_runs,
                                       tmp_path):
    user, token = api_token(role)
    with sessions() as session:
        last_job = session.execute(text("SELECT coalesce(max(id), 0) FROM procrastinate_jobs")
                                   ).scalar_one()
    config = tmp_path / "schemathesis.toml"
    config.write_text((HERE / "schemathesis.toml").read_text() + READING.format(*stored_runs))
    env = {**os.environ, "FAULTLINE_FUZZ_TOKEN": token}
    try:
        with served(api_app) as base:
            result = subprocess.run(
                [str(SCHEMATHESIS), "--config-file", str(config), "run",
                 f"{base}/api/v1/openapi.json", "--checks", "all", "--seed", SEED,
                 "--max-examples", EXAMPLES, "--workers", "1", "--no-color"],
                env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / f"schemathesis-{role}.txt").write_text(result.stdout + result.stderr)
        with sessions() as session:
            made = session.execute(select(func.count()).select_from(Run)
                                   .where(Run.requested_by == user)).scalar_one()
    finally:
        _delete_what_the_fuzzing_made(sessions, user, last_job)

    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-2000:]
    selected = re.search(r"Operations: +(\d+) selected / (\d+) total", result.stdout)
    tested = re.search(r"Tested: (\d+)", result.stdout)
    cases = re.search(r"(\d+) generated, (\d+) passed", result.stdout)
    assert selected and selected.group(1) == selected.group(2) == tested.group(1)
    assert cases and cases.group(1) == cases.group(2) and int(cases.group(1)) > 1000
    # the operator's token really could write (the fuzzing queued runs); the viewer's not
    assert (made > 0) == (role == "operator")
