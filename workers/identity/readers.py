"""One reader per match key: what a raw answer becomes before hashing, or why it is none
(`Unusable`), given what the lead's other answers say of it (`Lead`).

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from workers.identity import birthdates, emails, genders, letters, phones, places, postcodes, usstates
from workers.identity.letters import Unusable

_US_ZIP = re.compile(r"(\d{5})(\d{4})?")
_NOT_LETTER_OR_DIGIT = re.compile(r"[\W_]+")  # what str.isalnum() refuses, in any script


def _name(value: str, lead: "Lead") -> str:
    return letters.name(value, lead.country)


def _city(value: str, lead: "Lead") -> str:
    return letters.letters(value, lead.country)


def _email(value: str, lead: "Lead") -> str:
    """Exactly one address, read by email-validator's grammar (emails.py), lowercased."""
    try:
        return letters.lower(emails.address(value))
    except emails.NotAnEmail as err:
        raise Unusable(err.reason) from None


def _phone(value: str, lead: "Lead") -> str:
    try:
        return phones.e164_digits(value, lead.regions)
    except phones.NotAPhone as err:
        raise Unusable(err.reason) from None


def _state(value: str, lead: "Lead") -> str:
    if lead.american:
        code = usstates.us_state(value)
        if code:
            return code
        # Letters squashed from a US state no table knows can never match Meta's two-letter
        # code: nothing is sent rather than a hash that looks right.
        raise Unusable("unknown_state")
    return letters.letters(value, keep_digits=True)


def _zip(value: str, lead: "Lead") -> str:
    """Letters and digits only (a postal mark such as 〒, spaces and dashes go); a US ZIP is
    five digits (or ZIP+4, of which the five): four digits lost a leading zero, and a
    padded guess could be another town's, so it is dropped."""
    try:
        numeric = postcodes.read(value, None if lead.american else (lead.country or lead.decider))
    except postcodes.NotAPostcode as err:
        raise Unusable(str(err)) from None
    if numeric:
        return numeric  # `〒150-0002`, `SI-1000`, `P.C. 112`, `Dhaka-1207`: the code alone
    squashed = _NOT_LETTER_OR_DIGIT.sub("", letters.lower(value))
    us_zip = _US_ZIP.fullmatch(squashed)
    if us_zip and lead.american:
        return us_zip.group(1)  # US: the first five digits only
    if lead.country in _USPS or (lead.american and squashed.isdigit() and len(squashed) < 5):
        raise Unusable("not_a_us_zip")  # a US lead's postcode that is no ZIP, or one that lost a digit
    return squashed


def _country(value: str, lead: "Lead") -> str:
    code = places.country(value)
    if not code:
        raise Unusable("unknown_country")
    return code


# Countries whose everyday calendar is not the Gregorian one and whose years overlap it
# (Ethiopia's runs 7-8 years behind): a date in digits alone names no calendar.
_OWN_CALENDAR = frozenset({"et", "er"})


def _birth_date(value: str, lead: "Lead") -> str:
    if lead.decider in _OWN_CALENDAR and not any(ch.isalpha() for ch in value):
        raise Unusable("calendar_undecided")
    try:
        return birthdates.parse(value, country=lead.decider)
    except birthdates.NotADate as err:
        raise Unusable(err.reason) from None


def _gender(value: str, lead: "Lead") -> str:
    code = genders.code_of(value, lead.decider)
    if code is None:
        raise Unusable("unknown_gender")
    return code


def _external_id(value: str, lead: "Lead") -> str:
    return value.strip()


READERS = {
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


_USPS = frozenset({"us", "pr", "gu", "vi", "as", "mp"})  # the US and the territories with ZIP codes


class Lead(NamedTuple):
    """What a lead's other answers tell about one value: its country, where to read phones,
    and whether US rules apply to its state and postcode."""

    country: str | None  # its own answer, else the country of its international phone
    regions: tuple[str, ...]
    country_unread: bool = False  # it named a country no table recognised
    decider: str | None = None  # what decides a date's day-month order: its country, else the form's region
    # A US lead: it said so, or said no country where the form's or default region is the
    # US. One that named a country no table knows is not assumed to be one.
    american: bool = False

    @classmethod
    def of(cls, country: str | None, form_region: str | None, region: str, country_unread: bool = False) -> "Lead":
        """`region` (LEADRELAY_DEFAULT_REGION) reads national phones last; it never decides a
        date: the operator's default says nothing about one lead."""
        return _lead(country, form_region, region, country_unread)


@functools.lru_cache(maxsize=1024)  # countries and regions: a few hundred, and no one's data
def _lead(country: str | None, form_region: str | None, region: str, country_unread: bool) -> Lead:
    regions = tuple(dict.fromkeys([r.upper() for r in (country, form_region, region) if r]))
    if country is not None:
        american = country in _USPS  # Puerto Rico, Guam...: USPS ZIP codes
    else:
        american = not country_unread and regions[:1] in ((), ("US",))
    return Lead(country, regions, country_unread, (country or form_region or "").lower() or None, american)
