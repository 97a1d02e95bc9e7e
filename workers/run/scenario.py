"""`leadrelay send-test readiness`: a month of a sample funnel in the sandbox, to see the
readiness report as a team would after 30 days.

Notes: docs/internals/run.md
"""

from __future__ import annotations

import json
import random
import time

import requests
from rq import Queue

from workers import jobnames
from workers.common.queues import job_id
from workers.config import environment, sandbox
from workers.config.routing import DEFAULT
from workers.events import accuracy, accuracymarks, conversions, funnel, profiles, stagelag
from workers.reports import watched
from workers.run import sendtest

LEADS, DAYS, DAY = 300, 30, 86400
LIVE_SECONDS = DAY  # the last day's leads go through the service
SILENT_DAYS = 3  # Pipedrive's last post
FIRST_ID = 9_300_000_000_000_000


def plan(now: float, seed: int = 30) -> list[dict]:
    """The month's leads, oldest first, each with the stages it reached and when."""
    rng = random.Random(seed)
    leads = []
    for n in range(LEADS):
        created = now - (LEADS - n - rng.random()) * DAYS * DAY / LEADS
        lead = {"id": str(FIRST_ID + n), "created": int(created), "stages": []}
        if rng.random() < 0.24:
            # The last day's leads that qualify do so within hours: the stage API sends them live.
            fresh = created >= now - LIVE_SECONDS
            qualified = min(created + rng.uniform(0.1, 5 if not fresh else 0.15) * DAY, now - 60)
            lead["stages"].append(("QualifiedLead", int(qualified), "api", rng.uniform(300, 8 * 3600)))
            if rng.random() < 0.35:
                lead["stages"].append(("Schedule", int(qualified + rng.uniform(1, 6) * DAY), "pipedrive", 3 * 3600))
        leads.append(lead)
    return leads


def history(connection, leads: list[dict], now: float) -> dict:
    """Count what the service would have counted before the last day: each event on the
    day it went out, each stage post on its source, Meta's list of the last 7 days."""
    steps = []  # (when, what), run in time order as the service met them
    silent_since = now - SILENT_DAYS * DAY
    missing = 0
    for index, lead in enumerate(leads):
        if lead["created"] >= now - LIVE_SECONDS:
            continue
        marked = {"leadgen_id": lead["id"], "page_id": sandbox.PAGE_ID, "form_id": sandbox.FORM_ID}
        marked["route"] = {"dataset": DEFAULT}  # the dataset its Lead event went to, as a job's route says
        marked["created_time"] = lead["created"]
        if lead["created"] >= now - accuracy.WINDOW_DAYS * DAY and index % 25 == 0:
            steps.append((lead["created"], lambda p, m=marked: accuracymarks.mark(p, "meta", [m], now)))
            missing += 1  # Meta holds it; no webhook brought it: Lead Coverage under 100%
            continue
        steps.append((lead["created"] + 5, lambda p, lead=lead, m=marked: _lead(p, lead, m, now)))
        for name, at, source, lag in lead["stages"]:
            arrived = at + lag
            if arrived > now or (source == "pipedrive" and arrived > silent_since):
                continue  # not yet, or Pipedrive had stopped posting by then
            steps.append((arrived, lambda p, lead=lead, s=(name, at, source), t=arrived: _stage(p, lead, s, t)))
    with connection.pipeline(transaction=False) as pipe:
        for _, step in sorted(steps, key=lambda pair: pair[0]):
            step(pipe)
        pipe.execute()
    return {"leads": sum(1 for lead in leads if lead["created"] < now - LIVE_SECONDS), "missing": missing}


def _event(lead: dict, name: str, at: int) -> dict:
    return {
        "event_name": name,
        "event_id": conversions.event_id("meta", lead["id"], name),
        "event_time": at,
        "user_data": {"lead_id": int(lead["id"])},
    }


def _lead(pipe, lead: dict, marked: dict, now: float) -> None:
    funnel.record(pipe, [_event(lead, conversions.LEAD, lead["created"])], DEFAULT, lead["created"] + 5)
    if lead["created"] >= now - (accuracy.WINDOW_DAYS + 1) * DAY:
        for kind in ("meta", "webhook", "kept"):  # the sandbox keeps its events (dry run)
            accuracymarks.mark(pipe, kind, [marked], now)


def _stage(pipe, lead: dict, stage: tuple, arrived: float) -> None:
    name, at, source = stage
    event = _event(lead, name, at)
    funnel.record(pipe, [event], DEFAULT, arrived, {event["event_id"]: lead["created"]})
    stagelag.record(pipe, source, [{"occurred_at": at}], [{"status": "accepted"}], arrived)


def script_standin(settings, leads: list[dict], now: float) -> None:
    """The stand-in holds the last day's leads, says the Page token ends in 5 days, and
    has the Page unsubscribed."""
    live = [lead for lead in leads if lead["created"] >= now - LIVE_SECONDS]
    requests.post(
        f"{settings.graph_url}/_standin/scenario",
        timeout=10,
        json={
            "leads": [
                {"id": lead["id"], "created_time": lead["created"], "email": f"lead.{lead['id'][-4:]}@example.com"}
                for lead in live
            ],
            "token_expires": {settings.page_access_token: int(now + 5 * DAY)},
            "unsubscribed": [sandbox.PAGE_ID],
        },
    ).raise_for_status()


def live_body(leads: list[dict], now: float) -> bytes:
    """The last day's leads as one signed-able `leadgen` notification."""
    changes = [
        {
            "field": "leadgen",
            "value": {
                "leadgen_id": lead["id"],
                "page_id": sandbox.PAGE_ID,
                "form_id": sandbox.FORM_ID,
                "created_time": lead["created"],
            },
        }
        for lead in leads
        if lead["created"] >= now - LIVE_SECONDS
    ]
    return json.dumps(
        {"object": "page", "entry": [{"id": sandbox.PAGE_ID, "time": int(now), "changes": changes}]}
    ).encode()


def live_stages(leads: list[dict], now: float) -> list[dict]:
    """The last day's leads' stages that have happened by now, for the stage API."""
    return [
        {"leadgen_id": lead["id"], "stage": name, "occurred_at": at}
        for lead in leads
        if lead["created"] >= now - LIVE_SECONDS
        for name, at, _, _ in lead["stages"]
        if at <= now
    ]


def watch_now(queue: Queue) -> str:
    """The token and Page check, now instead of at the next slot."""
    return queue.enqueue(jobnames.WATCH, {}, job_id=job_id("watch", f"now-{int(time.time())}")).id


def run(settings, web: str, connection, queue: Queue, timeout: float = 60.0) -> dict:
    """The whole scenario against the running sandbox; what it did, and what to look at."""
    now = time.time()
    leads = plan(now)
    counted = history(connection, leads, now)
    script_standin(settings, leads, now)
    body = live_body(leads, now)
    answer = sendtest.post(f"{web}/webhooks/meta", body, sendtest.signed("meta", settings, body))
    answer.raise_for_status()
    live = [lead["id"] for lead in leads if lead["created"] >= now - LIVE_SECONDS]
    _wait(lambda: all(profiles.load(connection, "meta", lead_id) for lead_id in live), timeout, "the last day's leads")
    stages = live_stages(leads, now)
    if stages:
        requests.post(
            f"{web}/api/v1/stage-events",
            json=stages,
            headers={"Authorization": f"Bearer {settings.api_token}"},
            timeout=10,
        ).raise_for_status()
    started = time.time()
    watch_now(queue)
    _wait(lambda: (watched.read(connection) or {}).get("checked_at", 0) >= int(started), timeout, "the token check")
    return {
        "leads": len(leads),
        "written_as_history": counted["leads"],
        "sent_live": len(live),
        "stages_live": len(stages),
        "next": "`leadrelay readiness`, and the admin page's Readiness section: each gate with its figure, the "
        "Page token ending in 5 days, the unsubscribed Page with its fix, and Pipedrive silent for 3 days",
    }


def _wait(done, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            running = environment.start_command()
            raise TimeoutError(f"{what} did not finish within {timeout:.0f} s: is a worker running (`{running}`)?")
        time.sleep(0.2)
