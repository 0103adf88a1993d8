"""The OpenAPI document: valid OpenAPI 3.1, served as JSON, and describing exactly the routes
the app has (so neither can drift from the other); errors under /api/ are JSON."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import jsonschema
import pytest
import yaml
from factories import figures, make_run
from openapi_spec_validator import validate
from sqlalchemy import delete

import service.web.api
from service.store.models import Run

DOCUMENT = yaml.safe_load((Path(service.web.api.__file__).parent / "openapi.yaml").read_text())
METHODS = {"get", "post", "put", "patch", "delete"}


def _routes(app) -> dict[tuple[str, str], str]:
    """(path in OpenAPI's spelling, method) -> endpoint, of every route under /api/v1."""
    routes = {}
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/"):
            continue
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule.rule[len("/api/v1"):])
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            routes[(path, method.lower())] = rule.endpoint
    return routes


def _documented() -> dict[tuple[str, str], str]:
    return {(path, method): operation["operationId"]
            for path, item in DOCUMENT["paths"].items()
            for method, operation in item.items() if method in METHODS}


def test_the_document_is_valid_openapi_3_1():
    validate(DOCUMENT)

    assert DOCUMENT["openapi"] == "3.1.0"
    assert DOCUMENT["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http", "scheme": "bearer",
        "description": "An API token made with `faultline token create NAME --user USER`"}


def test_the_document_describes_exactly_the_routes_of_the_app(api_app):
    routes = _routes(api_app)

    assert set(_documented()) == set(routes)
    assert _documented() == {key: endpoint.removeprefix("api.")
                             for key, endpoint in routes.items()}


def test_every_operation_documents_its_errors_with_the_error_schema():
    for (path, method), _ in _documented().items():
        responses = DOCUMENT["paths"][path][method]["responses"]
        assert "401" in responses, (method, path)
        shared_token = DOCUMENT["paths"][path][method].get("security") == [{"alertToken": []}]
        if method != "get" and not shared_token:  # a shared token has no roles to refuse
            assert {"401", "403"} <= set(responses), (method, path)
    error = {"$ref": "#/components/schemas/Error"}
    assert all(r["content"]["application/json"]["schema"] == error
               for r in DOCUMENT["components"]["responses"].values())


def test_the_document_is_served_as_json(api_as):
    response = api_as("viewer").get("/api/v1/openapi.json")

    assert response.status_code == 200
    assert response.json == DOCUMENT


def test_an_unknown_api_path_is_a_json_404(api_as):
    response = api_as("viewer").get("/api/v1/nothing-here")

    assert response.status_code == 404
    assert response.json["error"].startswith("The requested URL was not found")


def test_a_method_the_path_does_not_take_is_a_json_405_that_says_which_it_takes(api_as):
    client = api_as("operator")
    response = client.put("/api/v1/runs")

    assert (response.status_code, response.json) == (
        405, {"error": "The method is not allowed for the requested URL."})
    assert set(response.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS", "POST"}
    response = client.delete("/api/v1/runs/1/figures")
    assert response.status_code == 405
    assert set(response.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS"}


BIG = str(2**31)  # one past PostgreSQL's integer


@pytest.mark.parametrize("path", [
    f"/api/v1/runs/{BIG}", f"/api/v1/runs/{BIG}/figures", f"/api/v1/runs/{BIG}/events",
    f"/api/v1/schedules/{BIG}", "/api/v1/runs/99999999999999999999999"])
def test_an_id_past_the_databases_integers_is_a_404_not_a_500(api_as, path):
    response = api_as("viewer").get(path)

    assert response.status_code == 404, response.json
    assert "error" in response.json


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_every_method_of_a_path_answers_404_for_an_id_past_the_databases_integers(
        api_as, method):
    response = getattr(api_as("operator"), method)(f"/api/v1/schedules/{BIG}", json={})

    assert response.status_code == 404, response.json
    assert response.json == {"error": f"no resource has id {BIG}"}


@pytest.mark.parametrize(("request_", "message"), [
    (("get", "/api/v1/faults?cluster=%00"), "text must not contain NUL characters"),
    (("get", "/api/v1/experiments/a%00b"), "text must not contain NUL characters"),
    (("post", "/api/v1/schedules", {"name": "x\u0000", "cron": "@daily",
                                   "experiment": "ceph-kill-osd", "clusters": ["lab-ceph"]}),
     "text must not contain NUL characters"),
    (("get", "/api/v1/comparisons?runs=7"), "a comparison needs at least two different runs"),
    (("get", "/api/v1/comparisons?runs=7,7"), "a comparison needs at least two different runs"),
    (("get", f"/api/v1/comparisons?runs=1,{BIG}"), f"'{BIG}' is not a run id"),
])
def test_text_postgresql_cannot_hold_and_runs_outside_the_document_are_400s(
        api_as, request_, message):
    method, url, *body = request_
    client = api_as("operator")
    response = (getattr(client, method)(url, json=body[0]) if body
                else getattr(client, method)(url))

    assert response.status_code == 400, response.json
    assert response.json["error"].startswith(message), response.json


@pytest.mark.parametrize(("query", "message"), [
    (f"page={BIG}", f"page must be from 1 to 2147483647, not '{BIG}'"),
    (f"schedule_id=-{BIG}1", f"schedule_id must be from 0 to 2147483647, not '-{BIG}1'"),
    ("schedule_id=-1", "schedule_id must be from 0 to 2147483647, not '-1'"),
    ("per_page=0", "per_page must be from 1 to 2147483647, not '0'"),
    ("cluster=lab%00ceph", "text must not contain NUL characters"),
    ("status=", "unknown status '' (known: queued, cancelled, running, completed, deviated, "
                "interrupted, invalid"),
    ("kind=", "unknown kind '' (known: ceph, swift)"),
])
def test_a_query_value_the_document_does_not_allow_is_a_400(api_as, query, message):
    response = api_as("viewer").get(f"/api/v1/runs?{query}")

    assert response.status_code == 400, response.json
    assert response.json["error"].startswith(message), response.json


def _check(response, path: str, method: str = "get") -> None:
    """The response's body against the schema the document gives for its status."""
    documented = DOCUMENT["paths"][path][method]["responses"][str(response.status_code)]
    if "$ref" in documented:
        documented = DOCUMENT["components"]["responses"][documented["$ref"].split("/")[-1]]
    schema = documented["content"]["application/json"]["schema"]
    jsonschema.validate(response.json, {**schema, "components": DOCUMENT["components"]},
                        cls=jsonschema.Draft202012Validator)


def test_responses_have_the_shapes_the_document_gives(api_as, sessions):
    operator = api_as("operator")
    with sessions() as session:
        run_id = make_run(session, cluster=f"api-{uuid.uuid4().hex[:8]}",
                          figures=figures(baseline_ops=100.0, lost_objects=0)).id
    try:
        schedule = operator.post("/api/v1/schedules", json={
            "name": f"shape-{run_id}", "cron": "@daily", "experiment": "ceph-kill-osd",
            "clusters": ["lab-ceph"]})
        queued = operator.post("/api/v1/runs", json={"experiment": "ceph-kill-osd",
                                                     "cluster": "lab-ceph"})
        _check(schedule, "/schedules", "post")
        _check(queued, "/runs", "post")
        _check(operator.post(f"/api/v1/runs/{queued.json['run_id']}/cancel"),
               "/runs/{run_id}/cancel", "post")
        for url, path in [
                ("/clusters", "/clusters"), ("/clusters/lab-ceph", "/clusters/{name}"),
                ("/experiments", "/experiments"),
                ("/experiments/ceph-kill-osd", "/experiments/{name}"),
                ("/runs?per_page=5", "/runs"), (f"/runs/{run_id}", "/runs/{run_id}"),
                (f"/runs/{run_id}/figures", "/runs/{run_id}/figures"),
                (f"/runs/{run_id}/samples", "/runs/{run_id}/samples"),
                (f"/runs/{run_id}/events", "/runs/{run_id}/events"),
                (f"/runs/{run_id}/journal", "/runs/{run_id}/journal"),
                (f"/comparisons?runs={run_id},{queued.json['run_id']}", "/comparisons"),
                ("/schedules", "/schedules"),
                (f"/schedules/{schedule.json['id']}", "/schedules/{schedule_id}"),
                ("/faults", "/faults"), ("/runs?page=0", "/runs")]:
            _check(operator.get("/api/v1" + url), path)
    finally:
        with sessions.begin() as session:
            session.execute(delete(Run).where(Run.id == run_id))
