"""Form submissions (Typeform, Tally) to job payloads, hashed on arrival.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

import re

from workers.config.mappingfile import HIDDEN_FIELDS
from workers.events import conversions
from workers.identity import browserids, matchkeys, userdata

_TRUE = {"true", "yes", "1", "on", "checked"}


def _slug(text) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(text or "").lower()).strip("_")


def _answer(answers: list[dict], ref: str):
    """By id or ref (Tally: key or label), never by position."""
    return (_answered(answers, ref) or {}).get("value")


def _answered(answers: list[dict], ref: str) -> dict | None:
    for answer in answers:
        if ref in (answer.get("id"), answer.get("ref")):
            return answer
    return None


def _default_answer(answers: list[dict], field: str):
    """Without a mapping: an answer found by its type, then by a conventional ref or label."""
    for answer in answers:
        if answer.get("type") in matchkeys.FORM_TYPES.get(field, ()):
            return answer.get("value")
    refs = matchkeys.FORM_REFS[field]
    for answer in answers:
        if _slug(answer.get("ref")) in refs or _slug(answer.get("id")) in refs:
            return answer.get("value")
    return None


# Boxes where ticking is the act (Tally's checkboxes and multi-select, Typeform's multiple
# choices): a ticked option consents, whatever its words. A single choice (a radio, a
# dropdown: `Yes` or `No`) consents by its words, or when it is the option the mapping names.
_TICKED = frozenset({"choices", "CHECKBOXES", "MULTI_SELECT"})
_NO = re.compile(r"(no|non|nein|não|nee|nej|nei)\b")  # `No`, `No, thanks`: a ticked refusal


def _consented(answer: dict | None, option: str | None) -> bool:
    """Consent as the form tool means it: a boolean answer (Typeform's yes/no and legal, a
    Tally checkbox) is itself; a ticked box consents, and when the mapping names the option
    (`consent_option`), only that one; a single choice by its words or that option."""
    if answer is None:
        return False
    value = answer.get("value")
    if isinstance(value, bool):
        return value
    chosen = [v.strip().casefold() for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
    chosen = [v for v in chosen if v]
    if option:
        return option.strip().casefold() in chosen
    if answer.get("type") in _TICKED:  # a ticked box consents, unless what it says is no
        return bool(chosen) and not all(_NO.match(v) for v in chosen)
    return bool(chosen) and all(v in _TRUE for v in chosen)


def _text(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [str(value)]
    return []


def prepare(
    submission: dict, form: dict | None, region: str, lead_key: str, processing: dict | None = None
) -> tuple[dict | None, str | None]:
    """The job payload for a submission, or None with the reason it is not sent.

    `form` is the form's settings; None means the form is not configured (defaults).
    `processing` is the source's Limited Data Use fields; the form's own `ldu` wins.
    """
    form = form or {}
    answers = submission["answers"]
    if "consent" in form and not _consented(_answered(answers, form["consent"]), form.get("consent_option")):
        return None, "no_consent"
    raw: dict[str, list[str]] = {}
    for field in matchkeys.SETTINGS:
        value = _answer(answers, form[field]) if field in form else _default_answer(answers, field)
        if _text(value):
            raw[field] = _text(value)
    values = {matchkeys.KEY_FOR[f]: v for f, v in raw.items() if f in matchkeys.KEY_FOR}
    if "full_name" in raw:
        values[matchkeys.FULL_NAME] = raw["full_name"]
    user_data, dropped = userdata.build(values, region, form.get("region"))

    names = {name: name for name in HIDDEN_FIELDS} | {"client_ip": "client_ip"} | form.get("hidden", {})
    # Placeholders a script left behind (`undefined`, `{{fbclid}}`) count as absent.
    hidden = {field: browserids.present(submission["hidden"].get(name)) for field, name in names.items()}
    submitted = submission.get("submitted_at")
    browser = {
        "fbc": browserids.fbc(hidden["fbc"], hidden["fbclid"], submitted),
        "fbp": browserids.fbp(hidden["fbp"]),
        "client_ip_address": browserids.client_ip(hidden["client_ip"]),
        "client_user_agent": hidden["user_agent"],
    }
    user_data.update({k: v for k, v in browser.items() if v})
    page_url = browserids.page_url(hidden["page_url"])

    event_name = form.get("event_name", conversions.LEAD)
    action_source = form.get("action_source", "auto")
    if action_source == "auto":
        # Meta requires both for website events.
        action_source = "website" if hidden["user_agent"] and page_url else "system_generated"
    payload = {
        "source": submission["source"],
        "key": lead_key,
        "form_id": submission["form_id"],
        "submission_id": submission["submission_id"],
        "submitted_at": submitted,
        "event_name": event_name,
        # The pixel's id for the same Lead, so Meta counts one conversion; else our own.
        "event_id": hidden["event_id"] or conversions.event_id(submission["source"], lead_key, event_name),
        "action_source": action_source,
        "event_source_url": page_url,
        "user_data": user_data,
        "value": form.get("value"),
        "currency": form.get("currency", "").upper() or None,
        "dropped": dropped,
        "processing": form.get("processing", processing),
    }
    return payload, None
