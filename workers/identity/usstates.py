"""US states as people write them (`New York`, `N.Y.`, `Flórida`, `Kalifornien`), to the USPS
code Meta hashes for `st`.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import functools
import gettext
import os
import unicodedata

import pycountry

from workers.identity.places import squash


def _state_table() -> dict[str, str]:
    table = {}
    for sub in pycountry.subdivisions.get(country_code="US"):
        code = sub.code.split("-")[1].lower()
        table[squash(sub.name)] = table[code] = code
    table.update(US_STATE_NAMES)
    table.update({squash(name): code for name, code in US_STATE_NAMES_ES.items()})
    return table


# Spanish names (forms in Spanish for US audiences): those not spelt as in English.
US_STATE_NAMES_ES = {
    "Nueva York": "ny",
    "Nueva Jersey": "nj",
    "Nuevo México": "nm",
    "Nuevo Mexico": "nm",
    "Carolina del Norte": "nc",
    "Carolina del Sur": "sc",
    "Dakota del Norte": "nd",
    "Dakota del Sur": "sd",
    "Virginia Occidental": "wv",
    "Luisiana": "la",
    "Misisipi": "ms",
    "Misisipí": "ms",
    "Misuri": "mo",
    "Pensilvania": "pa",
    "Hawái": "hi",
    "Oregón": "or",
    "Míchigan": "mi",
    "Kansas": "ks",
    "Tennesí": "tn",
    "Distrito de Columbia": "dc",
    "Islas Vírgenes": "vi",
    "Islas Virgenes": "vi",
}


# The abbreviations of the GPO style manual and AP (Calif., Mass., Penn.), DC's names,
# and the Virgin Islands' usual name. Keys are squashed.
US_STATE_NAMES = {
    "ala": "al",
    "ariz": "az",
    "ark": "ar",
    "calif": "ca",
    "cal": "ca",
    "colo": "co",
    "conn": "ct",
    "del": "de",
    "fla": "fl",
    "ill": "il",
    "ind": "in",
    "kan": "ks",
    "kans": "ks",
    "mass": "ma",
    "mich": "mi",
    "minn": "mn",
    "miss": "ms",
    "mont": "mt",
    "neb": "ne",
    "nebr": "ne",
    "nev": "nv",
    "okla": "ok",
    "ore": "or",
    "oreg": "or",
    "penn": "pa",
    "penna": "pa",
    "tenn": "tn",
    "tex": "tx",
    "wash": "wa",
    "wva": "wv",
    "wis": "wi",
    "wisc": "wi",
    "wyo": "wy",
    "washingtondc": "dc",
    "districtofcolumbia": "dc",
    "washingtondistrictofcolumbia": "dc",
    "usvirginislands": "vi",
    "virginislands": "vi",
}
_US_STATES = _state_table()


# A direction written short before a state's name: `N. Carolina`, `S Dakota`, `W. Virginia`.
_DIRECTIONS = {"n": "north", "s": "south", "w": "west"}


def us_state(text: str) -> str | None:
    """The USPS code in lowercase (`New York`, `new-york`, `NY`, `N.Y.` → `ny`, `Flórida`,
    `N. Carolina` → `nc`), or None."""
    found = _US_STATES.get(squash(text))
    if found:
        return found
    words = text.replace(".", " ").split()
    if len(words) > 1 and words[0].casefold() in _DIRECTIONS:
        return _US_STATES.get(squash(" ".join([_DIRECTIONS[words[0].casefold()], *words[1:]])))
    bare = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    if bare != text and squash(bare) in _US_STATES:
        return _US_STATES[squash(bare)]  # Flórida, as a Portuguese form writes it
    return _state_exonyms().get(squash(text))  # Kalifornien, Californie, カリフォルニア


@functools.cache
def _state_exonyms() -> dict[str, str]:
    """US state names in every language pycountry's ISO 3166-2 translations carry (built on
    the first name the tables above miss); a name two states would share is left out."""
    found: dict[str, set[str]] = {}
    states = [(sub.name, sub.code.split("-")[1].lower()) for sub in pycountry.subdivisions.get(country_code="US")]
    for language in sorted(os.listdir(pycountry.LOCALES_DIR)):
        try:
            translate = gettext.translation("iso3166-2", pycountry.LOCALES_DIR, languages=[language]).gettext
        except OSError:
            continue
        for name, code in states:
            found.setdefault(squash(translate(name)), set()).add(code)
    return {name: codes.pop() for name, codes in found.items() if len(codes) == 1 and name}
