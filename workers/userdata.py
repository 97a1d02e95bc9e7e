"""Normalisation and SHA-256 hashing of match keys, exactly as spec/meta.md §4 says.

`normalise(key, raw, region)` returns the normalised text or raises Unusable with the
reason; `build(fields, region)` turns a dict of raw values into Conversions API
`user_data` plus the list of keys it had to drop. Nothing here logs or keeps raw values.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import date, datetime
from typing import Iterable, Mapping

import phonenumbers
import pycountry

HASHED_KEYS = ("em", "ph", "fn", "ln", "db", "ge", "ct", "st", "zp", "country", "external_id")
_ALREADY_HASHED = re.compile(r"[0-9a-fA-F]{64}|[0-9a-fA-F]{32}")  # SHA-256, or MD5 (Meta's SDK passes both)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_COUNTRY_ALIASES = {"uk": "gb", "england": "gb", "scotland": "gb", "wales": "gb", "usa": "us", "america": "us"}
_US_STATES = {
    sub.name.casefold(): sub.code.split("-")[1].lower()
    for sub in pycountry.subdivisions.get(country_code="US")
}
# The date forms seen in Lead Ads (`April 19, 1987`) and in forms and CRMs.
_DATE_FORMATS = ("%Y%m%d", "%Y-%m-%d", "%m/%d/%Y", "%d/%m/%Y", "%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d.%m.%Y")


class Unusable(ValueError):
    """A raw value that cannot be normalised; `reason` is machine-readable."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _letters(value: str, keep_digits: bool = False) -> str:
    """Lowercase, NFC, only letters (and digits): drops punctuation and spaces, keeps é."""
    value = unicodedata.normalize("NFC", value.strip().casefold())
    keep = ("L", "M", "N") if keep_digits else ("L", "M")
    return "".join(ch for ch in value if unicodedata.category(ch)[0] in keep)


def _email(value: str, region: str) -> str:
    value = value.strip().lower()
    if not _EMAIL.fullmatch(value):
        raise Unusable("not_an_email")
    return value


def _phone(value: str, region: str) -> str:
    text = value.strip()
    if text.startswith("00"):
        text = "+" + text[2:]
    try:
        number = phonenumbers.parse(text, None if text.startswith("+") else region)
    except phonenumbers.NumberParseException:
        raise Unusable("unparseable_phone") from None
    if not phonenumbers.is_possible_number(number):
        # Digits with the country code but no `+` (how many CRMs store them).
        try:
            number = phonenumbers.parse("+" + re.sub(r"\D", "", text), None)
        except phonenumbers.NumberParseException:
            raise Unusable("impossible_phone") from None
        if not phonenumbers.is_possible_number(number):
            raise Unusable("impossible_phone")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164).lstrip("+")


def _name(value: str, region: str) -> str:
    return _letters(value)


def _city(value: str, region: str) -> str:
    return _letters(value)


def _country(value: str, region: str) -> str:
    text = value.strip()
    alias = _COUNTRY_ALIASES.get(text.casefold())
    if alias:
        return alias
    try:
        return pycountry.countries.lookup(text).alpha_2.lower()
    except LookupError:
        raise Unusable("unknown_country") from None


def _state(value: str, region: str, country: str | None = None) -> str:
    squashed = _letters(value, keep_digits=True)
    if country in (None, "us"):
        code = _US_STATES.get(value.strip().casefold())
        if code:
            return code
    return squashed


def _zip(value: str, region: str, country: str | None = None) -> str:
    squashed = re.sub(r"[\s\-]", "", value.strip().lower())
    us_zip = re.fullmatch(r"(\d{5})(\d{4})?", squashed)
    if us_zip and country in (None, "us"):
        return us_zip.group(1)  # US: the first five digits only
    return squashed


def _birth_date(value: str, region: str) -> str:
    text = re.sub(r"\s+", " ", value.strip())
    for fmt in _DATE_FORMATS:
        try:
            parsed = datetime.strptime(text, fmt).date()
        except ValueError:
            continue
        if date(1900, 1, 1) <= parsed <= date.today():
            return parsed.strftime("%Y%m%d")
        raise Unusable("implausible_birth_date")
    raise Unusable("unknown_date_format")


def _gender(value: str, region: str) -> str:
    first = value.strip().lower()[:1]
    if first in ("m", "f"):
        return first
    raise Unusable("unknown_gender")


def _external_id(value: str, region: str) -> str:
    return value.strip()


_NORMALISERS = {
    "em": _email,
    "ph": _phone,
    "fn": _name,
    "ln": _name,
    "db": _birth_date,
    "ge": _gender,
    "ct": _city,
    "st": _state,
    "zp": _zip,
    "country": _country,
    "external_id": _external_id,
}


def normalise(key: str, raw: str, region: str = "US", country: str | None = None) -> str:
    """The normalised text for one match key, before hashing.

    `country` (already normalised) tells whether US rules apply to `st` and `zp`.

    Raises:
        Unusable: empty, or not a value of that kind (reason says which).
    """
    if not isinstance(raw, str) or not raw.strip():
        raise Unusable("empty")
    if key in ("st", "zp"):
        out = _NORMALISERS[key](raw, region, country)
    else:
        out = _NORMALISERS[key](raw, region)
    if not out:
        raise Unusable("empty_after_normalising")
    return out


def hash_value(key: str, raw: str, region: str = "US", country: str | None = None) -> str:
    """SHA-256 of the normalised value; an already hashed value passes through, lowercased.

    Raises:
        Unusable: see `normalise`.
    """
    if isinstance(raw, str) and _ALREADY_HASHED.fullmatch(raw.strip()):
        return raw.strip().lower()
    return sha256(normalise(key, raw, region, country))


def _values(raw) -> Iterable[str]:
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, (list, tuple)):
        return [v for v in raw if isinstance(v, str)]
    return []


def build(fields: Mapping[str, object], region: str = "US") -> tuple[dict, list[dict]]:
    """`user_data` (each hashed key a list of hashes) from raw values, and what was dropped.

    Dropped entries are `{"key": "ph", "reason": "impossible_phone"}`: never the value.
    """
    user_data: dict[str, list[str]] = {}
    dropped: list[dict] = []
    country = None
    for raw in _values(fields.get("country")):
        try:
            country = _country(raw, region) if not _ALREADY_HASHED.fullmatch(raw.strip()) else None
            break
        except Unusable:
            pass
    for key in HASHED_KEYS:
        for raw in _values(fields.get(key)):
            try:
                hashed = hash_value(key, raw, region, country)
            except Unusable as err:
                dropped.append({"key": key, "reason": err.reason})
                continue
            if hashed not in user_data.setdefault(key, []):
                user_data[key].append(hashed)
    return {k: v for k, v in user_data.items() if v}, dropped
