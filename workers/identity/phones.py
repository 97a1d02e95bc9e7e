"""Phone numbers to Meta's form: E.164 digits without `+` (`16505551212`), valid or nothing.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

import phonenumbers

# An extension after the number: English `ext`/`x`/`#`, Spanish `anexo`/`ext.`, French
# (Canada) `poste`, Portuguese `ramal`, German `Durchwahl`/`DW`, Italian `interno`/`int.`.
_EXTENSION = re.compile(
    r"\s*(?:ext\.?|extension|x|#|anexo|poste|ramal|durchwahl|dw\.?|interno|int\.)\s*:?\s*\d{1,6}\s*$", re.IGNORECASE
)
_NOT_DIGIT = re.compile(r"\D+")
_FIRST_SIGN = re.compile(r"[+\d]")  # a number's first digit, or the `+` before it
_WORD_AFTER_DIGITS = re.compile(r"(?<=\d)\D*?[^\W\d_]")  # `... 89 wew. 21`, `... 25 локал 3`
_SEPARATORS_GONE = dict.fromkeys(map(ord, " +-().\t/"))  # what people type between digits (most numbers)
_LETTER_OR_HASH = re.compile(r"[^\W\d_]|#")  # only then can an extension be written (most numbers: never)
_TYPES = (
    "mobile",
    "fixed_line",
    "toll_free",
    "premium_rate",
    "shared_cost",
    "voip",
    "personal_number",
    "pager",
    "uan",
    "voicemail",
)
MAX_DIGITS = 17  # E.164 allows 15, plus a written trunk or international prefix


class NotAPhone(ValueError):
    """`reason` is `unparseable_phone` (no digits), `no_region_for_national` (a national
    form no given region fits) or `invalid_phone`."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def e164_digits(value: str, regions: tuple[str, ...]) -> str:
    """The number's E.164 digits without `+`.

    Raises:
        NotAPhone: no digits, or no valid number in any reading.
    """
    text = value
    digits = value.translate(_SEPARATORS_GONE)
    if not (digits.isdigit() and digits.isascii()):  # not only digits and separators: read it all
        if _LETTER_OR_HASH.search(value):  # an extension, or any word after the number, ends it
            text = _EXTENSION.sub("", value)
            after = _WORD_AFTER_DIGITS.search(text)
            text = text[: after.start()] if after else text
        digits = _NOT_DIGIT.sub("", text)
    if not digits.isascii():  # Arabic-Indic, Persian, fullwidth digits: their values
        digits = "".join(str(unicodedata.digit(ch)) for ch in digits)
    if not digits:
        raise NotAPhone("unparseable_phone")
    if len(digits) > MAX_DIGITS:
        raise NotAPhone("invalid_phone")
    if _international_sign(text) or digits.startswith("00"):
        found = _international(digits.lstrip("0"))
    else:
        found = None
        for region in regions:  # a loop, not next(filter(...)): every national number comes here
            found = _national(digits, region)
            if found:
                break
        if not found and national_form(digits):
            raise NotAPhone("no_region_for_national")
        found = found or _international(digits)
    if not found:
        raise NotAPhone("invalid_phone")
    return found


def _international_sign(text: str) -> bool:
    """A `+` before the number's first digit (`+46 8 ...`; after a label too: `tel:+46-8-...`)."""
    start = text.lstrip(" \t([")[:1]
    if start == "+" or start.isdigit():  # most numbers: decided by their first character
        return start == "+"
    first = _FIRST_SIGN.search(text)
    return first is not None and first.group() == "+"


def region_of(value: str) -> str | None:
    """The country (ISO alpha-2) an international number (`+62 ...`, `0062 ...`) belongs
    to; None for a national form, an invalid number, or a code several countries share
    whose number no one of them claims (+1 outside a known area code)."""
    text = value.strip()
    if not (_international_sign(text) or _NOT_DIGIT.sub("", text).startswith("00")):
        return None
    try:
        digits = e164_digits(value, ())
        region = phonenumbers.region_code_for_number(phonenumbers.parse("+" + digits))
    except (NotAPhone, phonenumbers.NumberParseException):
        return None
    return region if region and region != "ZZ" else None


def national_form(digits: str) -> bool:
    """Written with a trunk prefix: a leading 0 (no country code starts with one), or an 8
    before a number valid where 8 is the trunk prefix (Russia, Kazakhstan...)."""
    if digits.startswith("0"):
        return True
    return digits.startswith("8") and any(_valid(code, digits[1:]) for code in _EIGHT_TRUNK_CODES)


_EIGHT_TRUNK_CODES = sorted(
    {
        metadata.country_code
        for metadata in map(phonenumbers.PhoneMetadata.metadata_for_region, phonenumbers.SUPPORTED_REGIONS)
        if metadata is not None and metadata.national_prefix == "8" and metadata.country_code is not None
    }
)


def _national(digits: str, region: str) -> str | None:
    """E.164 digits for a number written without country code, read in `region`."""
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if metadata is None or metadata.country_code is None:
        return None
    prefix = metadata.national_prefix or ""
    for candidate in (digits, digits[len(prefix) :] if prefix and digits.startswith(prefix) else ""):
        if _valid(metadata.country_code, candidate):
            return f"{metadata.country_code}{candidate}"
    try:
        parsed = phonenumbers.parse(digits, region)
    except phonenumbers.NumberParseException:
        return None
    if phonenumbers.is_valid_number(parsed):
        # E.164 keeps what the digits alone lose: Italy's leading zero (+39 06...).
        return phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)[1:]
    return None


def _international(digits: str) -> str | None:
    """E.164 digits for a number that starts with its country code, if valid.

    Country codes are prefix-free, so the first of 1, 2 or 3 digits that is one is it.
    A trunk 0 written after the country code (`+44 (0)20 ...`) is dropped unless the
    number is valid with it (Italy's fixed lines keep it: +39 06 ...).
    """
    for size in (1, 2, 3):
        code = _COUNTRY_CODES.get(digits[:size])
        if code is not None:
            national = digits[size:]
            break
    else:
        return None
    for candidate in (national, national[1:] if national.startswith("0") else ""):
        if _valid(code, candidate):
            return f"{code}{candidate}"
    return None


_COUNTRY_CODES = {str(code): code for code in phonenumbers.COUNTRY_CODE_TO_REGION_CODE}  # `49`: 49


def _valid(code: int, national: str) -> bool:
    """A real number of some type in one of the regions that share the country code."""
    if len(national) < 4:
        return False
    for general, types in _patterns(code):  # loops, not any() over generators: every phone comes here
        if general.fullmatch(national):
            for pattern in types:
                if pattern.fullmatch(national):
                    return True
    return False


@functools.cache
def _patterns(code: int) -> tuple:
    """Per region of the code, main region first: its general pattern and its types'."""
    out = []
    for region in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(code, ()):
        metadata = (
            phonenumbers.PhoneMetadata.metadata_for_region(region)
            if region != "001"
            else phonenumbers.PhoneMetadata.metadata_for_nongeo_region(code)
        )
        if metadata is None or metadata.general_desc is None or not metadata.general_desc.national_number_pattern:
            continue
        types = [getattr(metadata, name) for name in _TYPES]
        out.append(
            (
                re.compile(metadata.general_desc.national_number_pattern),
                tuple(
                    re.compile(d.national_number_pattern) for d in types if d is not None and d.national_number_pattern
                ),
            )
        )
    return tuple(out)


def key_hash(value: str) -> str | None:
    """SHA-256 of a phone's digits as written (a WhatsApp wa_id, a `forget --phone`): what
    a record is keyed and forgotten by whether or not the number is valid; never a match
    key to send (e164_digits decides those). None: fewer than 6 digits."""
    digits = "".join(c for c in value if "0" <= c <= "9")
    return hashlib.sha256(digits.encode("ascii")).hexdigest() if len(digits) >= 6 else None
