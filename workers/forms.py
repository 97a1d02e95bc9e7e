"""Form submissions (Typeform, Tally) to job payloads, hashed on arrival.

The receiver maps answers to match keys by the form's settings (mappingfile), checks
consent, hashes every identifier and builds the click and browser ids. The job
payload it enqueues holds hashes, ids and the browser fields Meta needs for website
events, never a raw email, phone or name: jobs live on in Redis as dedupe records and
dead letters.
"""

from __future__ import annotations

import re

from workers import browserids, events, userdata

from .mappingfile import HIDDEN_FIELDS

# Match-key setting names to Conversions API keys.
KEY_FOR = {"email": "em", "phone": "ph", "first_name": "fn", "last_name": "ln", "city": "ct", "state": "st",
           "zip": "zp", "country": "country", "date_of_birth": "db", "gender": "ge", "external_id": "external_id"}
# Without a mapping: answers found by type, then by a conventional ref or label.
_BY_TYPE = {"email": {"email", "INPUT_EMAIL"}, "phone": {"phone_number", "INPUT_PHONE_NUMBER"}}
_CONVENTIONAL = {
    "email": {"email", "email_address", "work_email"}, "phone": {"phone", "phone_number", "mobile"},
    "first_name": {"first_name", "firstname"}, "last_name": {"last_name", "lastname", "surname"},
    "full_name": {"name", "full_name", "your_name"}, "city": {"city"}, "state": {"state", "province", "region"},
    "zip": {"zip", "zip_code", "postcode", "post_code", "postal_code"}, "country": {"country"},
    "date_of_birth": {"date_of_birth", "dob", "birthday"}, "gender": {"gender"}, "external_id": {"external_id"},
}
_TRUE = {"true", "yes", "1", "on", "checked"}


def _slug(text) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(text or "").lower()).strip("_")


def _answer(answers: list[dict], ref: str):
    """By id or ref (Tally: key or label), never by position."""
    for answer in answers:
        if ref in (answer.get("id"), answer.get("ref")):
            return answer.get("value")
    return None


def _default_answer(answers: list[dict], field: str):
    for answer in answers:
        if answer.get("type") in _BY_TYPE.get(field, ()):
            return answer.get("value")
    for answer in answers:
        if _slug(answer.get("ref")) in _CONVENTIONAL[field] or _slug(answer.get("id")) in _CONVENTIONAL[field]:
            return answer.get("value")
    return None


def _consented(value) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, list):
        return bool(value)
    return str(value).strip().lower() in _TRUE


def _text(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [str(value)]
    return []


def prepare(submission: dict, form: dict | None, region: str, dedupe_key: str,
            processing: dict | None = None) -> tuple[dict | None, str | None]:
    """The job payload for a submission, or None with the reason it is not sent.

    `form` is the form's settings; None means the form is not configured (defaults).
    `processing` is the source's Limited Data Use fields; the form's own `ldu` wins.
    """
    form = form or {}
    answers = submission["answers"]
    if "consent" in form and not _consented(_answer(answers, form["consent"])):
        return None, "no_consent"
    raw: dict[str, list[str]] = {}
    for field in (*KEY_FOR, "full_name"):
        value = _answer(answers, form[field]) if field in form else _default_answer(answers, field)
        if _text(value):
            raw[field] = _text(value)
    if "first_name" not in raw and "last_name" not in raw:
        for full in raw.get("full_name", []):
            first, _, rest = full.strip().partition(" ")
            raw.setdefault("first_name", []).append(first)
            if rest.strip():
                raw.setdefault("last_name", []).append(rest.strip())
    user_data, dropped = userdata.build({KEY_FOR[f]: v for f, v in raw.items() if f in KEY_FOR}, region,
                                        form.get("region"))

    names = {name: name for name in HIDDEN_FIELDS} | {"client_ip": "client_ip"} | form.get("hidden", {})
    # Placeholders a script left behind (`undefined`, `{{fbclid}}`) count as absent.
    hidden = {field: browserids.present(submission["hidden"].get(name)) for field, name in names.items()}
    submitted = submission.get("submitted_at")
    browser = {"fbc": browserids.fbc(hidden["fbc"], hidden["fbclid"], submitted), "fbp": browserids.fbp(hidden["fbp"]),
               "client_ip_address": browserids.client_ip(hidden["client_ip"]),
               "client_user_agent": hidden["user_agent"]}
    user_data.update({k: v for k, v in browser.items() if v})
    page_url = browserids.page_url(hidden["page_url"])

    event_name = form.get("event_name", events.LEAD)
    action_source = form.get("action_source", "auto")
    if action_source == "auto":
        # Meta requires both for website events.
        action_source = "website" if hidden["user_agent"] and page_url else "system_generated"
    payload = {
        "source": submission["source"],
        "key": dedupe_key.split(":", 1)[1],
        "form_id": submission["form_id"],
        "submission_id": submission["submission_id"],
        "submitted_at": submitted,
        "event_name": event_name,
        # The pixel's id for the same Lead, so Meta counts one conversion; else our own.
        "event_id": hidden["event_id"] or events.event_id(submission["source"], dedupe_key.split(":", 1)[1],
                                                          event_name),
        "action_source": action_source,
        "event_source_url": page_url,
        "user_data": user_data,
        "value": form.get("value"),
        "currency": form.get("currency", "").upper() or None,
        "dropped": dropped,
        "processing": form.get("processing", processing),
    }
    return payload, None
