"""`leadrelay send-test`: correctly signed samples sent to the running service, so a person
sees the whole path (and its failures) without writing code. Times are relative to now.

Notes: docs/internals/run.md
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timezone

import requests

from workers.common.queues import connect, redis_key
from workers.config import sandbox
from workers.config.settings import Settings
from workers.graphapi.graph import Graph
from workers.sources.registry import SOURCES

FAILURES = ("auth", "invalid", "transient", "expired", "version_warning", "version_ended")
# What each failure shows, and what to do next.
AFTER = {
    None: "the worker reads the lead and keeps its Lead event: `leadrelay dry-run` shows it, with lead_id",
    "auth": "the stand-in refuses the token (190) for 10 s: the first lead is dead-lettered `auth` and the token "
    "paused; the second waits on it (the admin page's banner). After 10 s, `leadrelay replay --reason "
    "auth` lifts the pause and runs both within seconds",
    "invalid": "the lead read is refused (100): the job is dead-lettered `invalid`. `leadrelay dead-letters list`, "
    "then `leadrelay replay JOB_ID` (the stand-in answers the second read)",
    "transient": "the lead read fails once (code 2): the job retries (LEADRELAY_RETRY_BASE_SECONDS, 30 s by "
    "default, with jitter) and then succeeds",
    "expired": "the lead is 8 days old, past Meta's 7-day window: dead-lettered `expired`, with no replay",
    "version_warning": "from now on every answer of the stand-in carries Meta's X-Ad-Api-Version-Warning (a call "
    "auto-upgraded from an ending version): the lead is delivered, and `leadrelay doctor`, `leadrelay readiness`, "
    "the admin page and /metrics say which version Meta served and to set META_API_VERSION. Restart `leadrelay "
    "run` to end it",
    "version_ended": "the lead read is refused with Meta's #2635 (the version called has ended): dead-lettered "
    "`invalid` at once, never retried, naming META_API_VERSION and the fix (`leadrelay dead-letters list`)",
}
EXPIRED_AGE = 8 * 86400
NO_WEBHOOK = (
    "Meta holds the lead but sent no webhook. The sweep leaves a lead LEADRELAY_SWEEP_GRACE_SECONDS to its "
    "webhook (5 s in the sandbox, 10 min live), then `leadrelay sweep` (or the worker's own sweep, every 5 min) "
    "recovers it: `leadrelay accuracy` shows it listed by Meta and recovered, and flags the Page webhook_silent"
)
SAMPLE_BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0 Safari/537.36"
SAMPLE_PAGE = "https://www.example.com/book-a-demo"


SAMPLES = redis_key("sandbox-samples")  # how many sample people this sandbox made
# Area codes whose 555-01xx numbers are valid and kept for fiction: 1,000 distinct phones.
_AREAS = ("650", "415", "212", "312", "617", "206", "303", "512", "404", "305")


def _fields(tag: str, number: int = 0) -> list[dict]:
    """A sample person of their own: an email and a phone no other sample shares (the
    `number`th sample's, in the 555-01xx range kept for fiction), so `forget` demos one person."""
    area = _AREAS[(number // 100) % len(_AREAS)]
    return [
        {"name": "email", "values": [f"sample.lead+{tag}@example.com"]},
        {"name": "full_name", "values": ["Sam Sample"]},
        {"name": "phone_number", "values": [f"+1 {area} 555 01{number % 100:02d}"]},
        {"name": "city", "values": ["Menlo Park"]},
    ]


def _next_sample(settings: Settings) -> int:
    """This sandbox's count of sample people, one more."""
    with connect(settings.redis_url).pipeline() as pipe:
        pipe.incr(SAMPLES)
        pipe.expire(SAMPLES, 30 * 86400)
        return pipe.execute()[0]


def person(fields: list[dict]) -> dict:
    """What `send-test` prints of its sample person: what `forget` can be given."""
    found = {f["name"]: f["values"][0] for f in fields}
    return {"email": found["email"], "phone": found["phone_number"]}


def post(url: str, body: bytes, headers: dict) -> requests.Response:
    return requests.post(url, data=body, headers={"Content-Type": "application/json", **headers}, timeout=10)


def signed(source: str, settings: Settings, body: bytes, url: str = "") -> dict:
    """The source's signature headers over `body` (posted to `url`), with its first
    secret (none without one)."""
    secrets = settings.source_secrets.get(source)
    return SOURCES[source].sign(secrets[0], body, url) if secrets else {}


def answer_of(response: requests.Response) -> dict:
    try:
        return response.json()
    except ValueError:
        return {"text": response.text[:200]}


def meta_lead(settings: Settings, web: str, fail: str | None = None, webhook: bool = True) -> dict:
    """Sandbox: a lead in the stand-in, then its signed leadgen notification (none with
    `webhook` False: a lead Meta holds whose webhook never came, for the sweep to find)."""
    created = int(time.time()) - (EXPIRED_AGE if fail == "expired" else 0)
    tag = uuid.uuid4().hex[:8]
    fields = _fields(tag, _next_sample(settings))
    lead = requests.post(
        f"{settings.graph_url}/_standin/leads",
        timeout=10,
        json={
            "created_time": created,
            "fail": None if fail == "expired" else fail,
            "field_data": fields,
            "form_id": sandbox.FORM_ID,
        },
    ).json()
    if not webhook:
        return {
            "source": "meta",
            "leadgen_id": lead["id"],
            "person": person(fields),
            "webhook": False,
            "next": NO_WEBHOOK,
        }
    body = json.dumps(
        {
            "object": "page",
            "entry": [
                {
                    "id": sandbox.PAGE_ID,
                    "time": int(time.time()),
                    "changes": [
                        {
                            "field": "leadgen",
                            "value": {
                                "leadgen_id": lead["id"],
                                "page_id": sandbox.PAGE_ID,
                                "form_id": sandbox.FORM_ID,
                                "ad_id": "777",
                                "adgroup_id": "777",
                                "created_time": created,
                            },
                        }
                    ],
                }
            ],
        }
    ).encode()
    response = post(f"{web}/webhooks/meta", body, signed("meta", settings, body))
    return {
        "source": "meta",
        "leadgen_id": lead["id"],
        "person": person(fields),  # `leadrelay forget --email ...` erases this one
        "status": response.status_code,
        "answer": answer_of(response),
        "next": AFTER[fail],
    }


def meta_test_lead(settings: Settings, form_id: str) -> dict:
    """A real Meta app: replace the form's one test lead; Meta then sends the webhook.

    Raises:
        JobError: Meta refused (the Page token needs leads_retrieval and
            pages_manage_ads on the form's Page).
    """
    graph = Graph(settings)
    token = settings.page_access_token
    deleted = 0
    for old in graph.call("GET", f"{form_id}/test_leads", token, probe=True).get("data", []):
        graph.call("DELETE", str(old["id"]), token, probe=True)  # Meta allows one test lead per form
        deleted += 1
    made = graph.call(
        "POST",
        f"{form_id}/test_leads",
        token,
        probe=True,
        params={"field_data": json.dumps(_fields(uuid.uuid4().hex[:8]))},
    )
    where = (
        "`leadrelay dry-run` shows the Lead event it became"
        if settings.dry_run
        else "Events Manager shows the Lead event (Test Events, with META_TEST_EVENT_CODE set); "
        "`leadrelay accuracy` counts it"
    )
    return {
        "source": "meta",
        "leadgen_id": made.get("id"),
        "deleted_test_leads": deleted,
        "next": f"Meta sends the leadgen webhook within seconds; then {where}",
    }


def _iso(seconds_ago: int = 0) -> str:
    return datetime.fromtimestamp(time.time() - seconds_ago, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def typeform_submission(settings: Settings, web: str) -> dict:
    tag = uuid.uuid4().hex[:8]
    body = json.dumps(
        {
            "event_id": uuid.uuid4().hex.upper(),
            "event_type": "form_response",
            "form_response": {
                "form_id": "sandboxTF",
                "token": tag,
                "landed_at": _iso(90),
                "submitted_at": _iso(),
                # The page passed these on (docs/sources.md): with both, the Lead is a website event.
                "hidden": {"fbclid": f"IwAR{tag}", "user_agent": SAMPLE_BROWSER, "page_url": SAMPLE_PAGE},
                "definition": {"id": "sandboxTF", "title": "Book a demo", "fields": []},
                "answers": [
                    {
                        "type": "email",
                        "email": f"sample.form+{tag}@example.com",
                        "field": {"id": "em", "type": "email", "ref": "email"},
                    },
                    {
                        "type": "phone_number",
                        "phone_number": "+16505551212",
                        "field": {"id": "ph", "type": "phone_number", "ref": "phone"},
                    },
                ],
            },
        }
    ).encode()
    response = post(f"{web}/webhooks/typeform", body, signed("typeform", settings, body))
    return {
        "source": "typeform",
        "status": response.status_code,
        "answer": answer_of(response),
        "next": "a Lead event with action_source website (the page passed its browser and address), with fbc "
        "from the ad click; `leadrelay dry-run`",
    }


def tally_submission(settings: Settings, web: str) -> dict:
    tag = uuid.uuid4().hex[:8]
    body = json.dumps(
        {
            "eventId": str(uuid.uuid4()),
            "eventType": "FORM_RESPONSE",
            "createdAt": _iso(),
            "data": {
                "responseId": tag,
                "submissionId": tag,
                "formId": "sandboxTL",
                "formName": "Book a demo",
                "createdAt": _iso(),
                "fields": [
                    {
                        "key": "question_em",
                        "label": "Email",
                        "type": "INPUT_EMAIL",
                        "value": f"sample.tally+{tag}@example.com",
                    },
                    {
                        "key": "question_ph",
                        "label": "Phone number",
                        "type": "INPUT_PHONE_NUMBER",
                        "value": "+16505551212",
                    },
                ],
            },
        }
    ).encode()
    response = post(f"{web}/webhooks/tally", body, signed("tally", settings, body))
    return {
        "source": "tally",
        "status": response.status_code,
        "answer": answer_of(response),
        "next": "a Lead event; `leadrelay dry-run`",
    }


STAGES = (("marketing qualified", None), ("meeting booked", None), ("won", 1200))  # CRM names, mapped by default


def stage_events(settings: Settings, web: str, leadgen_id: str) -> dict:
    """The lead's next stages, just now, through the stage API."""
    items = [
        {
            "leadgen_id": leadgen_id,
            "stage": stage,
            "occurred_at": int(time.time()),
            **({"value": value, "currency": "USD"} if value else {}),
        }
        for stage, value in STAGES
    ]
    response = requests.post(
        f"{web}/api/v1/stage-events", json=items, timeout=10, headers={"Authorization": f"Bearer {settings.api_token}"}
    )
    return {
        "source": "crm",
        "leadgen_id": leadgen_id,
        "status": response.status_code,
        "answer": answer_of(response),
        "next": "QualifiedLead, Schedule and Purchase events with the lead's lead_id; `leadrelay dry-run`",
    }
