"""Funnel stage changes from a CRM or a sheet: checked, hashed on arrival, queued.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

import math
import time
import uuid

import pycountry
import redis

from workers import jobnames
from workers.common import logs, policy, replication, times
from workers.common.queues import redis_key
from workers.config import ldu
from workers.config.routing import DEFAULT
from workers.config.stagemap import StageMap
from workers.events import conversions, ledger, personindex, profiles, stagelag
from workers.identity import browserids
from workers.intake import admission, chats, platforms, stagereads
from workers.intake import forgotten as intake_forgotten
from workers.intake.stagescope import Negative, Rejected, Scope, Unsendable  # noqa: F401 (callers name them here)

log = logs.get(__name__)

MAX_ITEMS = 1000
CLOCK_SKEW_SECONDS = 300  # a CRM clock a little ahead is not "the future"


def identify(
    connection: redis.Redis, item: dict, region: str, scope: Scope, hashed: dict | None = None
) -> tuple[dict | None, dict]:
    """The lead profile the item refers to (if known to this caller) and the hashed
    identifiers it gave (`hashed`: already made, by stagereads.prefetch)."""
    given = stagereads.given(item, region) if hashed is None else hashed
    if item.get("leadgen_id"):
        found = profiles.load(connection, "meta", str(item["leadgen_id"]).strip())
        if found and scope.holds(found):
            return found, given
    if item.get("submission_id"):
        source, _, rest = str(item["submission_id"]).partition(":")
        found = profiles.load(connection, source, rest) if rest else None
        if found and scope.holds(found):
            return found, given
    for dataset in scope.datasets:
        for match_key in profiles.LOOKUP_KEYS:
            for value in given.get(match_key, []):
                found = profiles.find(connection, match_key, value, dataset)
                if found:
                    return found, given
    return None, given


def check(
    connection: redis.Redis,
    item,
    stage_map: StageMap,
    region: str,
    scope: Scope,
    now: float | None = None,
    hashed: dict | None = None,
) -> dict:
    """One stage change, checked and hashed, as a plain dict ready to send.

    Raises:
        Rejected: with a reason a person can act on.
    """
    now = time.time() if now is None else now
    if not isinstance(item, dict):
        raise Rejected("malformed_item", "each item must be a JSON object")
    stage = item.get("stage") or item.get("event_name")
    if not stage or not isinstance(stage, str):
        raise Rejected("missing_stage", "give `stage`: a CRM stage name or a Meta event name")
    event_name, problem = stage_map.resolve(stage)
    if problem == "negative_stage":
        profile, _ = identify(connection, item, region, scope, hashed)
        raise Negative(stage, f"{profile['source']}:{profile['key']}" if profile else None)
    if event_name is None:
        reason, _, detail = (problem or "").partition(": ")
        raise Rejected(reason, detail or f"{stage!r} is a negative stage: recorded, not sent")
    occurred = times.unix_time(item.get("occurred_at") if item.get("occurred_at") is not None else item.get("time"))
    if occurred is None:
        raise Rejected("missing_time", "give `occurred_at`: when the stage changed (ISO 8601 or unix seconds)")
    if occurred > now + CLOCK_SKEW_SECONDS:
        raise Rejected("future_time", "occurred_at is in the future")
    found = None
    if occurred < conversions.oldest_acceptable(now):
        # Meta's 7 days; a Google lead's stage has its conversion actions' window (the sender's).
        found = identify(connection, item, region, scope, hashed)
        if not (found[0] or {}).get("google"):
            raise Rejected(
                "too_old",
                "occurred_at is more than 7 days ago (less an hour of margin): Meta refuses "
                "such events (2804003); backfills cannot be sent",
            )
    value = item.get("value", stage_map.values.get(event_name))
    currency = item.get("currency") or (stage_map.currency if value is not None else None)
    if value is not None and (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value < 1e15  # a refund or a typo: Meta's value is what a conversion is worth
    ):
        raise Rejected("bad_value", "value must be a number, 0 or more and under 10^15")
    if currency is not None and (
        not isinstance(currency, str) or pycountry.currencies.get(alpha_3=currency.upper()) is None
    ):
        raise Rejected("bad_currency", "currency must be an ISO 4217 code such as EUR")
    if event_name == "Purchase" and (value is None or currency is None):
        raise Rejected("purchase_needs_value", "Purchase needs value and currency")
    source_name = item.get("lead_event_source")
    if source_name is not None and (not isinstance(source_name, str) or not 0 < len(source_name.strip()) <= 100):
        raise Rejected("bad_lead_event_source", "lead_event_source must be your CRM's name: text, 1-100 characters")
    try:
        processing = ldu.from_item(item)
    except ldu.BadLdu as err:
        raise Rejected("bad_ldu", str(err)) from None
    profile, given = found or identify(connection, item, region, scope, hashed)
    chat = chats.find(connection, item, given, scope)
    if chat is not None and profile is None:  # a chat-born person: the chat's own event alone
        return chats.stage(chat, event_name, occurred, now, value, currency)
    if profile is None and item.get("conversation"):
        raise Unsendable("unknown_conversation", "no chat started from an ad is held for this conversation")
    who = sorted(v for k, values in given.items() if k in profiles.LOOKUP_KEYS for v in values)  # never country alone
    if profile is None and not who:
        named = next((k for k in ("leadgen_id", "submission_id") if item.get(k)), None)
        if named:  # the same words for a lead that never came and another client's
            raise Rejected(
                "unknown_person",
                f"no lead with this {named} is kept here (it never arrived, or is past its retention): "
                "add the person's email or phone to send the stage anyway",
            )
        raise Rejected("unknown_person", "give at least one of leadgen_id, email, phone, external_id, submission_id")
    if profile and occurred < profile["created_time"]:
        raise Rejected("before_lead", "occurred_at is before the lead was created")

    def checked_for(profile: dict | None) -> dict:
        """The item checked for this lead of the person (or none known)."""
        route = scope.route(item, profile)
        if profile:
            source, lead_key = profile["source"], profile["key"]
        else:
            lead_key = who[0][:32]
            # Two clients may send stages for the same person: their events must not collide.
            source, lead_key = "crm", lead_key if route["dataset"] == DEFAULT else f"{route['dataset']}:{lead_key}"
        user_data = {
            **given,
            **{k: v for k, v in (profile or {}).get("user_data", {}).items() if k in ("em", "ph", "external_id")},
        }
        if profile and profile.get("lead_id"):
            user_data["lead_id"] = profile["lead_id"]
        if profile and profile.get("fbc"):
            user_data["fbc"] = profile["fbc"]
        elif browserids.fbc(item.get("fbc")):  # a click id the change itself carried (a booking link's)
            user_data["fbc"] = browserids.fbc(item.get("fbc"))
        lead_first = None
        if profile and event_name != conversions.LEAD:
            lead_event_id = conversions.event_id(source, lead_key, conversions.LEAD)
            fresh = profile["created_time"] >= conversions.oldest_acceptable(now)
            if fresh and not ledger.confirmed(connection, lead_event_id):
                lead_first = {"event_id": lead_event_id, "event_time": profile["created_time"]}
        lead_event_source = scope.routes.datasets[route["dataset"]].lead_event_source
        return {
            "source": source,
            "key": lead_key,
            "event_name": event_name,
            "event_id": conversions.event_id(source, lead_key, event_name),
            "event_time": min(occurred, int(now)),
            "user_data": user_data,
            "value": value,
            "currency": currency.upper() if currency else None,
            "lead_event_source": (source_name or "").strip() or lead_event_source,
            "route": route,
            "lead_first": lead_first,
            "lead_time": profile["created_time"] if profile else None,  # the funnel's days to this stage
            "stage": stage,
            **({"google": profile["google"]} if profile and profile.get("google") else {}),  # a Google lead's
            "processing": stage_map.processing if processing is None else processing,
        }

    checked = checked_for(profile)
    # Both a Lead Ads lead and a chat an ad started: each origin gets its own event; so does
    # the person's lead from the other ad platform (platforms.py), each platform its own.
    others = platforms.others(connection, profile, scope, occurred, now) if profile and scope.routes.google else []
    checked["also"] = _chat_too(chat, event_name, occurred, now, value, currency) + [checked_for(o) for o in others]
    google = platforms.to_google(item, checked, scope, region) if scope.routes.google and not others else None
    checked["also"] += [google] if google else []
    return checked


def _chat_too(chat: dict | None, event_name: str, occurred: int, now: float, value, currency) -> list[dict]:
    try:
        return [chats.stage(chat, event_name, occurred, now, value, currency)] if chat else []
    except (Unsendable, Rejected):  # its lead's event still goes
        return []


def claim(connection: redis.Redis, checked: dict) -> bool:
    """Each stage is sent once per lead: True the first time, False for a repeat."""
    return bool(connection.set(redis_key("stage", checked["event_id"]), 1, nx=True, ex=policy.STAGE_SEEN_TTL))


def release(connection: redis.Redis, checked: dict) -> None:
    connection.delete(redis_key("stage", checked["event_id"]))


def accept(
    connection: redis.Redis,
    queue,
    items: list,
    stage_map: StageMap,
    region: str,
    scope: Scope,
    source: str = "api",
    send=None,
) -> list[dict]:
    """Check, claim and queue a list of stage changes; one result per item, in order.

    Accepted items go out together in one job (sent many per Conversions API request), or,
    given `send`, to it (a drain batch that read CRM changes back sends their events itself,
    in the same batch); `source` names who posted them, for the stage lag (stagelag.py).

    Raises:
        redis.RedisError: Redis failed; nothing was queued and no stage stays claimed (so
            for anything else that fails part-way).
    """
    now = time.time()
    # Every key the checks can read, in three round trips for the whole request (stagereads.py).
    reader, hashed = stagereads.prefetch(connection, items, region, scope.datasets, siblings=bool(scope.routes.google))
    results: list[dict] = []
    to_claim: list[tuple[int, dict]] = []
    recorded: list[dict] = []
    for index, item in enumerate(items):
        result = _check_one(reader, index, item, stage_map, region, scope, now, hashed.get(index), recorded)
        if isinstance(result, dict) and "status" in result:
            results.append(result)
        else:  # checked: claimed below with the others (and its chat's event, if any)
            results.append({})
            to_claim += [(index, checked) for checked in (result, *(result.pop("also", None) or ()))]
    to_claim = intake_forgotten.stages(connection, to_claim, results, recorded)
    accepted: list[dict] = []
    try:
        # Each stage is sent once per lead: one pipeline of claims, in order, so a repeat
        # within the request is a duplicate as a repeat in a later request is.
        with connection.pipeline(transaction=False) as pipe:
            for _, checked in to_claim:
                pipe.set(redis_key("stage", checked["event_id"]), 1, nx=True, ex=policy.STAGE_SEEN_TTL)
            won = pipe.execute() if to_claim else []
        for (index, checked), claimed in zip(to_claim, won):
            if claimed:
                accepted.append(checked)
                answer = {"index": index, "status": "accepted", "event_name": checked["event_name"]}
                answer["event_id"] = checked["event_id"]
            else:
                answer = {"index": index, "status": "duplicate", "event_id": checked["event_id"]}
            if results[index]:  # the item's second event (its chat's): said beside the first
                results[index].setdefault("also", []).append(answer)
            else:
                results[index] = answer
        admission.record_ignored(connection, "crm", recorded)  # `leadrelay ignored` and the admin page list them
        with connection.pipeline(transaction=False) as pipe:  # how late `source` posts (stagelag.py)
            stagelag.record(pipe, source, items, results, now)
            personindex.note_events(pipe, [checked["event_id"] for checked in accepted])  # forget finds them
            batch = None if send is not None or not accepted else uuid.uuid4().hex
            if batch:
                personindex.note_job(pipe, batch, accepted)
            pipe.execute()
        if batch:
            queue_events(queue, accepted, batch)
        elif accepted and send is not None:
            send(accepted)
        # Acknowledged means replicated. Not replicated in time: the claims are released
        # below and the sender retries; the job already queued may then go twice, with the
        # same event ids, which Meta deduplicates.
        replication.confirm(connection)
    except BaseException:
        # All or nothing: a request that fails part-way keeps none of its claims, so the
        # CRM's retry sends those stages instead of meeting `duplicate` for good.
        for checked in accepted:
            release(connection, checked)
        raise
    return results


def queue_events(queue, accepted: list[dict], batch: str | None = None) -> None:
    """One job sends these checked items (jobs.send_stage_events), retried as a whole; the
    person index names it under each of their leads (given its id `batch`, the caller did)."""
    if batch is None:
        batch = uuid.uuid4().hex
        with queue.connection.pipeline(transaction=False) as pipe:
            personindex.note_job(pipe, batch, accepted)
            pipe.execute()
    queue.enqueue(
        jobnames.SEND_STAGE_EVENTS,
        {"events": accepted},
        job_id=batch,
        result_ttl=policy.STAGE_RESULT_TTL,
        failure_ttl=policy.FAILURE_TTL,
        description=f"{len(accepted)} stage events",
    )


def _check_one(
    reader, index: int, item, stage_map: StageMap, region: str, scope: Scope, now: float, hashed, recorded: list
):
    """One item's result when it is not to be sent, else the item checked (to claim)."""
    try:
        return check(reader, item, stage_map, region, scope, now, hashed)
    except Rejected as err:
        return {"index": index, "status": "rejected", "reason": err.reason, "detail": err.detail}
    except Unsendable as err:
        recorded.append({"reason": err.reason, "stage": item.get("stage") or item.get("event_name")})
        return {"index": index, "status": "recorded", "reason": err.reason, "detail": err.detail}
    except Negative as negative:
        recorded.append({"reason": "negative_stage", "stage": negative.stage, "lead": negative.lead})
        return {"index": index, "status": "recorded", "reason": "negative_stage", "stage": negative.stage}
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError, UnicodeError) as err:
        # A shape no check foresaw is this item's problem alone, never its batch's.
        log.warning("stage_item_unreadable", index=index, error=type(err).__name__)
        return {
            "index": index,
            "status": "rejected",
            "reason": "unreadable_item",
            "detail": f"this item could not be read ({type(err).__name__})",
        }


SHEET_NUMBERS = ("value",)


def from_sheet_row(row: dict) -> dict:
    """A sheet row to a stage change: empty cells dropped, value as a number."""
    cells = {k.strip(): v.strip() for k, v in row.items() if k and isinstance(v, str) and v.strip()}
    item: dict[str, object] = dict(cells)
    if "ldu" in cells:
        item["ldu"] = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}.get(
            cells["ldu"].lower(), cells["ldu"]
        )  # anything else is rejected with bad_ldu
    for name in SHEET_NUMBERS:
        if name in cells:
            try:
                item[name] = float(cells[name])
            except ValueError:
                pass  # left as text: the check rejects it with bad_value
    return item
