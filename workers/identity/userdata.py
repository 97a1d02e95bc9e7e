"""Normalisation and SHA-256 hashing of match keys, as Meta's customer-information rules say.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from typing import Iterable, Mapping, NamedTuple

from workers.identity import birthdates, emails, genders, matchkeys, names, phones, places, postcodes
from workers.identity.matchkeys import HASHED

_ALREADY_HASHED = re.compile(r"[0-9a-fA-F]{64}|[0-9a-fA-F]{32}")  # SHA-256, or MD5 (Meta's SDK passes both)
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
EMPTY_MD5 = hashlib.md5(b"").hexdigest()
_US_ZIP = re.compile(r"(\d{5})(\d{4})?")
_NOT_ASCII_LETTER = re.compile(r"[^a-z]+")
_NOT_ASCII_LETTER_OR_DIGIT = re.compile(r"[^a-z0-9]+")
_ALNUM = re.compile(r"[^\W_]")  # a letter or a digit, in any script
_BROKEN_TEXT = re.compile("[\ud800-\udfff\ufffd]")


class Unusable(ValueError):
    """A raw value that cannot be normalised; `reason` is machine-readable."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _lower(value: str) -> str:
    """NFC, then str.lower (which keeps ß and writes a final sigma as ς), then NFC again."""
    if value.isascii():
        return value.strip().lower()  # NFC changes no ASCII text: the common case, cheaply
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", value.strip()).lower())


def _folded(value: str) -> str:
    """NFKC (full-width and other compatibility forms to their plain letters and digits),
    and the invisible format characters gone (a byte-order mark, zero-width spaces)."""
    if not unicodedata.is_normalized("NFKC", value):
        value = unicodedata.normalize("NFKC", value)
    return _FORMAT_CHARACTER.sub("", value) if _FORMAT_CHARACTER.search(value) else value


def _runs(codes: list[int]) -> list[list[int]]:
    """Sorted code points as runs of consecutive ones (a character class of ranges is fast)."""
    runs: list[list[int]] = []
    for code in codes:
        if runs and runs[-1][-1] == code - 1:
            runs[-1].append(code)
        else:
            runs.append([code])
    return runs


# Every format character (Unicode category Cf), to be deleted, as one character class.
# They live in the first two planes and the tags block (a test checks every plane).
_FORMAT_CHARACTERS = [
    c for r in (range(0x20000), range(0xE0000, 0xE0080)) for c in r if unicodedata.category(chr(c)) == "Cf"
]
_FORMAT_CHARACTER = re.compile(
    "[%s]" % "".join(f"\\U{run[0]:08x}-\\U{run[-1]:08x}" for run in _runs(_FORMAT_CHARACTERS))
)


# Where the lead's language lowercases I differently (Unicode's SpecialCasing): Turkish and
# Azerbaijani write I/ı and İ/i. Elsewhere İ is still i: `İ`.lower() would add a combining dot.
_DOTLESS_I = frozenset({"tr", "az"})


def _cased(value: str, lead: "_Lead | None") -> str:
    if lead is not None and (lead.country or "").lower() in _DOTLESS_I:
        return value.replace("I", "ı").replace("İ", "i")
    return value.replace("İ", "i") if "İ" in value else value


def _letters(value: str, lead: "_Lead | None" = None, keep_digits: bool = False) -> str:
    """Letters (and marks; digits if asked) lowercased in the lead's language: `fn`, `ln`,
    `ct` as they are, so the table below names this function itself (a call less per key)."""
    value = _cased(value, lead)
    if value.isalpha():  # letters only (no marks, spaces or digits): the common case, nothing to drop
        return _lower(value)
    if value.isascii():  # no strip needed: spaces go with everything else that is not a letter
        return (_NOT_ASCII_LETTER_OR_DIGIT if keep_digits else _NOT_ASCII_LETTER).sub("", value.lower())
    kept, previous = [], ""
    for ch in _lower(value):
        kind = unicodedata.category(ch)[0]
        if kind == "L" or (kind == "N" and keep_digits) or (kind == "M" and previous in "LM" and previous):
            kept.append(ch)  # a mark only on a letter: `0̄` is no letter
            previous = kind
        else:
            previous = ""
    return unicodedata.normalize("NFC", "".join(kept))


def _initials(value: str) -> bool:
    """`J.`, `J.W.`, `J W`: cased letters standing alone (a Han given name of one character
    is a name: its script has no case)."""
    words = [w for w in re.split(r"[\s.]+", value.strip()) if w]
    return 0 < len(words) <= 3 and all(len(w) == 1 and w.isalpha() and w != w.swapcase() for w in words)


_BRACKETED = re.compile(r"\([^)]*\)|\[[^\]]*\]")  # `Anna (Ann)`: a nickname beside the name


def _name(value: str, lead: "_Lead | None" = None) -> str:
    """`fn`, `ln`: each word as `_letters` keeps it, one space between words (Meta's SDK
    keeps them: `mary ann`, `van der berg`). Titles, suffixes, initials and a bracketed
    nickname are no name."""
    if len(value) > 1 and value.isalpha():  # one word of letters: the common case, read at once
        if names.is_title(value):
            raise Unusable("title_only")
        return _letters(value, lead)
    words = names.without_titles(_BRACKETED.sub(" ", value).split())
    while len(words) > 1 and words[-1].casefold().strip(".") in names.SUFFIXES:
        words = words[:-1]
    if len(words) == 1 and names.is_title(words[0]):
        raise Unusable("title_only")
    pairs = [(word, _letters(word, lead)) for word in words]
    kept = [(word, out) for word, out in pairs if any(_is_letter(ch) for ch in out)]
    full = [out for word, out in kept if not (_initials(word) or _initials(out))]  # `Mary J.`: the initial goes
    if not full:
        raise Unusable("initials" if kept else "empty_after_normalising")
    full = names.without_titles(full)  # `0DR AA`: a title once its digits are gone
    if len(full) == 1 and names.is_title(full[0]):
        raise Unusable("title_only")
    return " ".join(full)


def _is_letter(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "L"


def _email(value: str, lead: "_Lead") -> str:
    """Exactly one address, read by email-validator's grammar (emails.py), lowercased."""
    try:
        return _lower(emails.address(value))
    except emails.NotAnEmail as err:
        raise Unusable(err.reason) from None


def _phone(value: str, lead: "_Lead") -> str:
    try:
        return phones.e164_digits(value, lead.regions)
    except phones.NotAPhone as err:
        raise Unusable(err.reason) from None


def _state(value: str, lead: "_Lead") -> str:
    if lead.american:
        code = places.us_state(value)
        if code:
            return code
        # Letters squashed from a US state no table knows can never match Meta's two-letter
        # code: nothing is sent rather than a hash that looks right.
        raise Unusable("unknown_state")
    return _letters(value, keep_digits=True)


def _zip(value: str, lead: "_Lead") -> str:
    """Letters and digits only (a postal mark such as 〒, spaces and dashes go); a US ZIP is
    five digits (or ZIP+4, of which the five): four digits lost a leading zero, and a
    padded guess could be another town's, so it is dropped."""
    try:
        numeric = postcodes.read(value, None if lead.american else (lead.country or lead.decider))
    except postcodes.NotAPostcode as err:
        raise Unusable(str(err)) from None
    if numeric:
        return numeric  # `〒150-0002`, `SI-1000`, `P.C. 112`, `Dhaka-1207`: the code alone
    squashed = "".join(ch for ch in _lower(value) if ch.isalnum())
    us_zip = _US_ZIP.fullmatch(squashed)
    if us_zip and lead.american:
        return us_zip.group(1)  # US: the first five digits only
    if lead.country in _USPS or (lead.american and squashed.isdigit() and len(squashed) < 5):
        raise Unusable("not_a_us_zip")  # a US lead's postcode that is no ZIP, or one that lost a digit
    return squashed


def _country(value: str, lead: "_Lead") -> str:
    code = places.country(value)
    if not code:
        raise Unusable("unknown_country")
    return code


# Countries whose everyday calendar is not the Gregorian one and whose years overlap it
# (Ethiopia's runs 7-8 years behind): a date in digits alone names no calendar.
_OWN_CALENDAR = frozenset({"et", "er"})


def _birth_date(value: str, lead: "_Lead") -> str:
    if lead.decider in _OWN_CALENDAR and not any(ch.isalpha() for ch in value):
        raise Unusable("calendar_undecided")
    try:
        return birthdates.parse(value, country=lead.decider)
    except birthdates.NotADate as err:
        raise Unusable(err.reason) from None


def _gender(value: str, lead: "_Lead") -> str:
    code = genders.code_of(value, lead.decider)
    if code is None:
        raise Unusable("unknown_gender")
    return code


def _external_id(value: str, lead: "_Lead") -> str:
    return value.strip()


_NORMALISERS = {
    "em": _email,
    "ph": _phone,
    "fn": _name,
    "ln": _name,
    "db": _birth_date,
    "ge": _gender,
    "ct": _letters,
    "st": _state,
    "zp": _zip,
    "country": _country,
    "external_id": _external_id,
}


_USPS = frozenset({"us", "pr", "gu", "vi", "as", "mp"})  # the US and the territories with ZIP codes


class _Lead(NamedTuple):
    """What a lead's other answers tell about one value: its country, where to read phones,
    and whether US rules apply to its state and postcode."""

    country: str | None  # its own answer, else the country of its international phone
    regions: tuple[str, ...]
    country_unread: bool = False  # it named a country no table recognised
    decider: str | None = None  # what decides a date's day-month order: its country, else the form's region

    @classmethod
    def of(cls, country: str | None, form_region: str | None, region: str, country_unread: bool = False) -> "_Lead":
        """`region` (LEADRELAY_DEFAULT_REGION) reads national phones last; it never decides a
        date: the operator's default says nothing about one lead."""
        regions = tuple(dict.fromkeys([r.upper() for r in (country, form_region, region) if r]))
        return cls(country, regions, country_unread, (country or form_region or "").lower() or None)

    @property
    def american(self) -> bool:
        """A US lead: it said so, or said no country where the form's or default region is the
        US. One that named a country no table knows is not assumed to be one."""
        if self.country is not None:
            return self.country in _USPS  # Puerto Rico, Guam...: USPS ZIP codes
        return not self.country_unread and self.regions[:1] in ((), ("US",))


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
    return _normalised(key, raw, _Lead.of(country, form_region, region))


# The keys whose readers keep any letter (and its marks): an answer of marks alone must go.
# The others' grammars hold letters or digits by construction (digits, `f`, a code, an address).
_MAY_BE_MARKS = frozenset({"fn", "ln", "ct", "st", "zp"})


def _normalised(key: str, raw, lead: _Lead) -> str:
    if not isinstance(raw, str) or not raw or raw.isspace():
        raise Unusable("empty")
    if not raw.isascii():
        # A lone surrogate, or where one was (jsonbody.py): not a value anyone typed; never ASCII.
        if _BROKEN_TEXT.search(raw):
            raise Unusable("invalid_text")
        if key != "external_id":  # an external id is kept as other channels send it
            raw = _folded(raw)
    out = _NORMALISERS[key](raw, lead)
    if not out or (key in _MAY_BE_MARKS and not _ALNUM.search(out)):  # `¯`: a lone mark
        raise Unusable("empty_after_normalising")
    return out


def hash_value(
    key: str, raw: str, region: str = "US", country: str | None = None, form_region: str | None = None
) -> str:
    """SHA-256 of the normalised value; an already hashed value passes through, lowercased.

    Raises:
        Unusable: see `normalise`; `empty` for the hash of an empty string.
    """
    return _hashed(key, raw, _Lead.of(country, form_region, region))


# Keys whose answers repeat across a form's leads and name no one (a city, a state, a country,
# a gender): their hashes are kept per answer and lead, bounded. Names, emails, phones, dates
# of birth and postcodes are personal data: never kept here.
_REPEATING = frozenset({"ct", "st", "country", "ge"})


@functools.lru_cache(maxsize=4096)
def _hashed_repeating(key: str, raw: str, lead: _Lead) -> str:
    return _hashed(key, raw, lead)


def _hashed(key: str, raw, lead: _Lead) -> str:
    if isinstance(raw, str) and len(raw) >= 32 and _ALREADY_HASHED.fullmatch(raw.strip()):
        hashed = raw.strip().lower()
        if hashed in (EMPTY_SHA256, EMPTY_MD5):
            raise Unusable("empty")
        return hashed
    return hashlib.sha256(_normalised(key, raw, lead).encode("utf-8")).hexdigest()  # sha256(), a call less


# Meta's Lead Ads Testing Tool answers every question with a placeholder (brackets or not)
# and its own dummy address, and a script can leave a template unfilled: no one's data,
# never hashed (the lead itself still flows).
_TEMPLATE_ANSWER = re.compile(
    r"\s*(?:<?\s*test lead\s*:\s*dummy data for [^>]*>?|\{\{[^{}]*\}\}|test@meta\.com|test@fb\.com)\s*",
    re.IGNORECASE,
)


def _without_templates(fields: Mapping[str, object]) -> tuple[Mapping[str, object], list[dict]]:
    """The fields less the answers that are templates, and one dropped entry for each."""
    text = "\n".join([raw if isinstance(raw, str) else "\n".join(_values(raw)) for raw in fields.values()])
    if "{{" not in text and "test" not in text.lower():
        return fields, []  # the common case (`test` is in every template answer but `{{...}}`)
    if not any(_TEMPLATE_ANSWER.fullmatch(v) for raw in fields.values() for v in _values(raw)):
        return fields, []
    found = {key: [v for v in _values(raw) if _TEMPLATE_ANSWER.fullmatch(v)] for key, raw in fields.items()}
    kept = {key: [v for v in _values(raw) if v not in found[key]] for key, raw in fields.items()}
    name = {matchkeys.FULL_NAME: "fn"}  # a full name's placeholder stands for both names
    gone = [name.get(key, key) for key, values in found.items() for _ in values]
    return kept, [{"key": key, "reason": "test_placeholder"} for key in gone]


def _values(raw) -> Iterable[str]:
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, (list, tuple)):
        return [v for v in raw if isinstance(v, str)]
    return []


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
    lead = _Lead.of(country, form_region, region, unread)
    full_names = _values(fields.get(matchkeys.FULL_NAME))
    if full_names:  # split here, where the lead's country is known: it can decide the order
        fields = dict(fields)
        dropped += names.split_full_name(fields, full_names, lead.decider)
    for key in HASHED:
        given = fields.get(key)
        if given is None:
            continue
        for raw in (given,) if isinstance(given, str) else _values(given):
            try:
                hashed = _hashed_repeating(key, raw, lead) if key in _REPEATING else _hashed(key, raw, lead)
            except Unusable as err:
                dropped.append({"key": key, "reason": err.reason})
                continue
            found = user_data.get(key)
            if found is None:
                user_data[key] = [hashed]
            elif hashed not in found:
                found.append(hashed)
    return user_data, dropped
