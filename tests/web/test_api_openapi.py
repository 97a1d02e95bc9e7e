"""The stage API's OpenAPI 3.1 document: valid by the validator the package index keeps
(openapi-spec-validator), served by the app, true to the routes the app has, and every
real answer the API gives (202, 400, 401, 413, a privacy request's states) valid against its schema."""

import re
import time

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from webhook_app import create_app

TOKEN = "stage-api-token"


@pytest.fixture
def api(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    return create_app().test_client()


@pytest.fixture
def spec(api) -> dict:
    answer = api.get("/api/v1/openapi.json")  # no token needed: it holds no data
    assert answer.status_code == 200 and answer.mimetype == "application/json"
    return answer.get_json()


def _conforms(spec: dict, path: str, answer, method: str = "post") -> None:
    """The answer's body is valid against the schema the document gives for its status."""
    documented = spec["paths"][path][method]["responses"][str(answer.status_code)]
    schema = {**documented["content"]["application/json"]["schema"], "components": spec["components"]}
    Draft202012Validator(schema).validate(answer.get_json())


def test_the_document_is_valid_openapi_3_1(spec):
    assert spec["openapi"] == "3.1.0"
    validate(spec)


def test_the_document_names_exactly_the_apps_api_routes(api, spec):
    routes = {
        (re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule), method.lower())
        for rule in api.application.url_map.iter_rules()
        if rule.rule.startswith("/api/")
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    documented = {(path, method) for path, item in spec["paths"].items() for method in item}
    assert documented == routes


def test_every_answer_of_the_api_is_what_the_document_says(api, spec):
    path, auth = "/api/v1/stage-events", {"Authorization": f"Bearer {TOKEN}"}
    now = int(time.time())
    items = [
        {"stage": "QualifiedLead", "email": "one@example.com", "occurred_at": now},
        {"stage": "QualifiedLead", "email": "one@example.com", "occurred_at": now},
        {"stage": "disqualified", "email": "two@example.com", "occurred_at": now},
        {"stage": "Purchase", "email": "three@example.com", "occurred_at": now},
    ]
    accepted = api.post(path, json=items, headers=auth)
    assert accepted.status_code == 202
    assert [r["status"] for r in accepted.get_json()["results"]] == ["accepted", "duplicate", "recorded", "rejected"]
    for answer in (
        accepted,
        api.post(path, data=b"not json", headers={**auth, "Content-Type": "application/json"}),
        api.post(path, json=items),
        api.post(path, json=[items[0]] * 1001, headers=auth),
    ):
        assert str(answer.status_code) in spec["paths"][path]["post"]["responses"], answer.status_code
        _conforms(spec, path, answer)
    assert {400, 401, 413} <= {
        api.post(path, data=b"x", headers=auth).status_code,
        api.post(path, json=items).status_code,
        api.post(path, json=[items[0]] * 1001, headers=auth).status_code,
    }


def test_a_privacy_requests_answers_are_what_the_document_says(api, spec, work):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for what in ("forget", "export"):
        path = f"/api/v1/people/{what}"
        taken = api.post(path, json={"email": f"{what}@example.com"}, headers=auth)
        assert taken.status_code == 202 and taken.headers["Location"] == taken.get_json()["status_url"]
        _conforms(spec, path, taken)
        status = "/api/v1/people/requests/{ref}"
        for answer in (api.get(taken.headers["Location"], headers=auth), None):
            if answer is None:
                work()
                answer = api.get(taken.headers["Location"], headers=auth)
                assert answer.get_json()["state"] == "done"
            _conforms(spec, status, answer, "get")
        _conforms(spec, status, api.get("/api/v1/people/requests/forget-0000000000000000", headers=auth), "get")
