"""How Google's answers are classified (workers/googleapi/datamanager.py): every reason in
Google's own ErrorReason enum (the generated client's, https://developers.google.com/data-manager/api/reference/rest/v1/ErrorReason)
gets a class on purpose, and the HTTP status decides where no reason does. Answers are
built as `requests` receives them: the transport, not our code, is what is stood in for."""

from __future__ import annotations

import json

import pytest
import requests
from google.ads import datamanager_v1

from workers.common.policy import AUTH, INVALID, THROTTLED, TRANSIENT, JobError
from workers.googleapi import datamanager

ACCOUNT = set(datamanager.ACCOUNT_REASONS)  # the account, not the events: pause
PASSING = {"INTERNAL_ERROR", "DEADLINE_EXCEEDED", "CONVERSION_ACTION_TOO_RECENTLY_CREATED"}
QUOTA = {"RESOURCE_EXHAUSTED"}


def _answer(status: int, state: str, reason: str | None = None, headers: dict | None = None) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}] if reason else []
    body = {"error": {"code": status, "message": "m", "status": state, "details": details}}
    response._content = json.dumps(body).encode()
    response.headers.update(headers or {})
    return response


@pytest.mark.parametrize("reason", [e.name for e in datamanager_v1.ErrorReason if e.value], ids=str)
def test_every_reason_google_names_has_a_class_on_purpose(reason):
    with pytest.raises(JobError) as refused:
        datamanager._answer(_answer(400, "INVALID_ARGUMENT", reason))
    wanted = (
        AUTH if reason in ACCOUNT else TRANSIENT if reason in PASSING else THROTTLED if reason in QUOTA else INVALID
    )
    assert refused.value.reason == wanted
    assert reason in refused.value.detail  # said in the dead letter


@pytest.mark.parametrize(
    "status, state, wanted",
    [
        (429, "RESOURCE_EXHAUSTED", THROTTLED),
        (503, "UNAVAILABLE", TRANSIENT),
        (500, "INTERNAL", TRANSIENT),
        (504, "DEADLINE_EXCEEDED", TRANSIENT),
        (401, "UNAUTHENTICATED", AUTH),
        (403, "PERMISSION_DENIED", AUTH),
        (400, "INVALID_ARGUMENT", INVALID),
        (404, "NOT_FOUND", INVALID),
    ],
)
def test_the_status_decides_where_no_reason_does(status, state, wanted):
    with pytest.raises(JobError) as refused:
        datamanager._answer(_answer(status, state, headers={"Retry-After": "120"}))
    assert refused.value.reason == wanted and refused.value.http_status == status
    assert refused.value.retry_after == 120


def test_an_answer_that_is_no_json_object_is_transient_never_taken():
    response = requests.Response()
    response.status_code, response._content = 200, b"[]"
    with pytest.raises(JobError) as refused:
        datamanager._answer(response)
    assert refused.value.reason == TRANSIENT
