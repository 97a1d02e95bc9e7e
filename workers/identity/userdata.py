"""Normalisation and SHA-256 hashing of match keys, as Meta's customer-information rules say.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Mapping

from workers.identity import letters, matchkeys, names, phones, places
from workers.identity.letters import Unusable
from workers.identity.matchkeys import HASHED
from workers.identity.placeholders import values as _values
from workers.identity.placeholders import without_templates as _without_templates
from workers.identity.readers import READERS, Lead

_ALREADY_HASHED = re.compile(r"[0-9a-fA-F]{64}|[0-9a-fA-F]{32}")  # SHA-256, or MD5 (Meta's SDK passes both)
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
EMPTY_MD5 = hashlib.md5(b"").hexdigest()
_ALNUM = re.compile(r"[^\W_]")  # a letter or a digit, in any script
_BROKEN_TEXT = re.compile("[\ud800-\udfff\ufffd]")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalise(
    key: str, raw: str, region: str = "US", country: str | None = None, form_region: str | None = None
) -> str:
    """The normalised text for one match key, before hashing.

    `country` (already normalised) is the lead's own: US rules for `st` and `zp` apply to
    US leads (or leads of unknown country), and a phone without a country code is tried
    there first, then in `form_region`, then in `region` (the default).

    Raises:
        Unusable: empty, or not a value of that kind (reason says which).
    """
    return _normalised(key, raw, Lead.of(country, form_region, region))


# The keys whose readers keep any letter (and its marks): an answer of marks alone must go.
# The others' grammars hold letters or digits by construction (digits, `f`, a code, an address).
_MAY_BE_MARKS = frozenset({"fn", "ln", "ct", "st", "zp"})


def _normalised(key: str, raw, lead: Lead) -> str:
    if not isinstance(raw, str) or not raw or raw.isspace():
        raise Unusable("empty")
    if not raw.isascii():
        # A lone surrogate, or where one was (jsonbody.py): not a value anyone typed; never ASCII.
        if "\ufffd" in raw or (not raw.isprintable() and _BROKEN_TEXT.search(raw)):  # a surrogate is unprintable
            raise Unusable("invalid_text")
        if key != "external_id":  # an external id is kept as other channels send it
            raw = letters.folded(raw)
    out = READERS[key](raw, lead)
    # `¯`: a lone mark. An ASCII answer is read to letters and digits, never marks alone.
    if not out or (key in _MAY_BE_MARKS and not out.isascii() and not _ALNUM.search(out)):
        raise Unusable("empty_after_normalising")
    return out


def hash_value(
    key: str, raw: str, region: str = "US", country: str | None = None, form_region: str | None = None
) -> str:
    """SHA-256 of the normalised value; an already hashed value passes through, lowercased.

    Raises:
        Unusable: see `normalise`; `empty` for the hash of an empty string.
    """
    return _hashed(key, raw, Lead.of(country, form_region, region))


# Keys whose answers repeat across a form's leads and name no one (a city, a state, a country,
# a gender): their hashes are kept per answer and lead, bounded. Names, emails, phones, dates
# of birth and postcodes are personal data: never kept here.
_REPEATING = frozenset({"ct", "st", "country", "ge"})


@functools.lru_cache(maxsize=4096)
def _hashed_repeating(key: str, raw: str, lead: Lead) -> str:
    return _hashed(key, raw, lead)


def _hashed(key: str, raw, lead: Lead) -> str:
    if isinstance(raw, str) and len(raw) >= 32 and _ALREADY_HASHED.fullmatch(raw.strip()):
        hashed = raw.strip().lower()
        if hashed in (EMPTY_SHA256, EMPTY_MD5):
            raise Unusable("empty")
        return hashed
    return hashlib.sha256(_normalised(key, raw, lead).encode("utf-8")).hexdigest()  # sha256(), a call less


_HASHERS = [(key, _hashed_repeating if key in _REPEATING else _hashed) for key in HASHED]


def phone_regions(fields: Mapping[str, object], region: str = "US", form_region: str | None = None) -> tuple[str, ...]:
    """Where the lead's national phone numbers are read, in order, as `build` reads them:
    its country, the form's region, the default region."""
    country = lead_country(fields)
    unread = country is None and any(raw.strip() for raw in _values(fields.get("country")))
    if country is None and not unread:
        country = _phone_country(fields)
    return Lead.of(country, form_region, region, unread).regions


def lead_country(fields: Mapping[str, object]) -> str | None:
    """The lead's own country (alpha-2, lowercase) from its `country` answer, if readable."""
    for raw in _values(fields.get("country")):
        if raw.strip() and not _ALREADY_HASHED.fullmatch(raw.strip()):
            code = places.country(raw)
            if code:
                return code
    return None


def _phone_country(fields: Mapping[str, object]) -> str | None:
    """The country of the lead's international phone numbers, when they all agree on one."""
    found = {region for raw in _values(fields.get("ph")) if raw.strip() and (region := phones.region_of(raw))}
    return found.pop().lower() if len(found) == 1 else None


def build(fields: Mapping[str, object], region: str = "US", form_region: str | None = None) -> tuple[dict, list[dict]]:
    """`user_data` (each hashed key a list of hashes) from raw values, and what was dropped.
    Raw full names under `matchkeys.FULL_NAME` become `fn` and `ln` when neither is given.

    Dropped entries are `{"key": "ph", "reason": "invalid_phone"}`: never the value.
    """
    user_data: dict[str, list[str]] = {}
    dropped: list[dict] = []
    fields, dropped = _without_templates(fields)
    country = lead_country(fields)
    unread = country is None and any(raw.strip() for raw in _values(fields.get("country")))
    if country is None and not unread:  # no country given: an international phone places the lead
        country = _phone_country(fields)
    lead = Lead.of(country, form_region, region, unread)
    full_names = _values(fields.get(matchkeys.FULL_NAME))
    if full_names:  # split here, where the lead's country is known: it can decide the order
        fields = dict(fields)
        dropped += names.split_full_name(fields, full_names, lead.decider)
    for key, hasher in _HASHERS:
        given = fields.get(key)
        if given is None:
            continue
        if isinstance(given, str):  # one answer: the common case, without the list's bookkeeping
            try:
                user_data[key] = [hasher(key, given, lead)]
            except Unusable as err:
                dropped.append({"key": key, "reason": err.reason})
            continue
        for raw in _values(given):
            try:
                hashed = hasher(key, raw, lead)
            except Unusable as err:
                dropped.append({"key": key, "reason": err.reason})
                continue
            found = user_data.get(key)
            if found is None:
                user_data[key] = [hashed]
            elif hashed not in found:
                found.append(hashed)
    return user_data, dropped
