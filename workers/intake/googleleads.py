"""Google Ads lead form leads to job payloads, hashed on arrival: Google's keys (its own
normalisation, identity/googlekeys.py) for Google's events, and Meta's hashes beside them
only to find the lead again (a CRM's stage by email, a forget), never to send.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

from workers.common import times
from workers.config.googledest import GoogleDestination
from workers.config.routing import Client, Routes
from workers.events import conversions
from workers.identity import emails, googlekeys, matchkeys, phones, userdata

# Google's `column_id`s (the Google Ads API's LeadFormFieldUserInputType names) that hold
# a match key. Every other column (a company, a job title, a qualifying answer, a national
# id) is never read: a custom question is read only when the mapping file names it.
COLUMNS = {
    "EMAIL": "email",
    "WORK_EMAIL": "email",
    "PHONE_NUMBER": "phone",
    "WORK_PHONE": "phone",
    "FIRST_NAME": "first_name",
    "LAST_NAME": "last_name",
    "FULL_NAME": "full_name",
    "POSTAL_CODE": "zip",
    "CITY": "city",
    "REGION": "state",
    "COUNTRY": "country",
}


def jobs(
    items: list[dict], configured: dict, routes: Routes, region: str, owner: Client | None, lead_key
) -> tuple[list[tuple[str, dict]], list[dict]]:
    """Leads to (lead key, hashed job argument), each routed to its Google destination;
    what is not sent, with its reason. A client's own key reaches its own destinations only;
    a test lead (Google's test button) reaches only a destination in dry run."""
    out, not_sent = [], []
    for item in items:
        route, reason = routes.google_lead(item.get("form_id"))
        destination = routes.google_of(route)
        if destination is not None and owner is not None and destination.name not in owner.datasets:
            route, reason = None, "form_out_of_scope"
        if route is not None and destination is not None:
            if item["test"] and not destination.dry_run:
                reason = "test_delivery"  # never uploaded to Google
            else:
                key = lead_key(item)
                form = configured.get(item.get("form_id") or "")
                out.append((key, {**prepare(item, form, destination, region, key), "route": route}))
                continue
        not_sent.append({"reason": reason, "form_id": item.get("form_id"), "submission_id": item["submission_id"]})
    return out, not_sent


def prepare(item: dict, form: dict | None, destination: GoogleDestination, region: str, key: str) -> dict:
    """The job payload: what the drain's form path sends (event id, Meta's hashes for the
    lookups) and `google`, the event's Google identifiers, click id and consent."""
    form = form or {}
    raw = _answers(item["answers"], form)
    values = {matchkeys.KEY_FOR[f]: v for f, v in raw.items() if f in matchkeys.KEY_FOR}
    if "full_name" in raw:
        values[matchkeys.FULL_NAME] = raw["full_name"]
    form_region = form.get("region") or destination.region
    user_data, dropped = userdata.build(values, region, form_region)
    regions = userdata.phone_regions(values, region, form_region)
    submitted = times.unix_time(item.get("submitted_at"))
    return {
        "source": item["source"],
        "key": key,
        "form_id": item.get("form_id"),
        "submission_id": item["submission_id"],
        "submitted_at": submitted,
        "event_name": conversions.LEAD,
        "event_id": conversions.event_id(item["source"], key, conversions.LEAD),
        "action_source": "system_generated",
        "event_source_url": None,
        "user_data": user_data,
        "value": form.get("value"),
        "currency": form.get("currency", "").upper() or None,
        "dropped": dropped + _google_dropped(raw, regions),
        "processing": None,
        "test": item["test"],
        "google": {
            "em": hashes(raw.get("email", []), googlekeys.email, emails.NotAnEmail),
            "ph": hashes(raw.get("phone", []), lambda v: googlekeys.phone(v, regions), phones.NotAPhone),
            "gclid": item.get("gclid"),
            "consent": _consent(item["answers"], form, destination),
        },
    }


def _answers(answers: list[dict], form: dict) -> dict[str, list[str]]:
    """Raw values by match key setting: Google's typed columns, then the questions the
    mapping file names (by `column_name` or `column_id`), which win."""
    raw: dict[str, list[str]] = {}
    for answer in answers:
        field = COLUMNS.get(answer.get("id") or "")
        if field and answer.get("value"):
            raw.setdefault(field, []).append(answer["value"])
    for field in matchkeys.SETTINGS:
        ref = form.get(field)
        if ref:
            found = [a["value"] for a in answers if ref in (a.get("id"), a.get("ref")) and a.get("value")]
            if found:
                raw[field] = found
    return raw


def hashes(values: list[str], normalise, unusable: type[Exception]) -> list[str]:
    """Google's hashes of the values its rules read (`normalise`); the others left out."""
    out = []
    for value in values:
        try:
            out.append(googlekeys.hashed(normalise(value)))
        except unusable:
            continue  # counted by _google_dropped; a wrong value is worse than none
    return list(dict.fromkeys(out))


def _google_dropped(raw: dict, regions: tuple[str, ...]) -> list[dict]:
    out = []
    for value in raw.get("email", []):
        try:
            googlekeys.email(value)
        except emails.NotAnEmail:
            out.append({"key": "google_email", "reason": "invalid_email"})
    for value in raw.get("phone", []):
        try:
            googlekeys.phone(value, regions)
        except phones.NotAPhone:
            out.append({"key": "google_phone", "reason": "invalid_phone"})
    return out


_YES = {"yes", "true", "1", "i agree", "agree", "accept", "accepted", "granted"}


def _consent(answers: list[dict], form: dict, destination: GoogleDestination) -> dict[str, str]:
    """The lead's own answer where the mapping file names its consent question (granted
    when it agreed, else denied), else the destination's configured default."""
    question = form.get("consent")
    if not question:
        return dict(destination.consent)
    said = next((a.get("value") for a in answers if question in (a.get("id"), a.get("ref"))), None)
    agreed = isinstance(said, str) and said.strip().casefold() in _YES
    word = "CONSENT_GRANTED" if agreed else "CONSENT_DENIED"
    return {"adUserData": word, "adPersonalization": word}
