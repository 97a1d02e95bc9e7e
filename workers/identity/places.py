"""Countries as people write them, to the codes Meta hashes (US states: usstates.py).

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import functools
import gettext
import re
import unicodedata

import babel
import pycountry
from babel import Locale, localedata

_NOT_ASCII_LETTER = re.compile(r"[^a-z]+")


def squash(text: str) -> str:
    """Lowercase letters only (accents kept, NFC): the form every table here is keyed by."""
    if text.isascii():
        return _NOT_ASCII_LETTER.sub("", text.lower())
    text = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).lower())
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in "LM")


# Names people use that pycountry's English names do not carry. Keys are squashed.
# `eua`: Estados Unidos da América, as Portuguese writes it short (EE. UU. in Spanish is
# already `eeuu`); `الإمارات`, the Emirates, as Arabic forms name the UAE short.
COUNTRY_NAMES = {
    "eua": "us",
    "الإمارات": "ae",
    "uk": "gb",
    "greatbritain": "gb",
    "britain": "gb",
    "england": "gb",
    "scotland": "gb",
    "wales": "gb",
    "northernireland": "gb",
    "unitedkingdom": "gb",
    "america": "us",
    "unitedstatesofamerica": "us",
    "estadosunidos": "us",
    "étatsunis": "us",
    "eeuu": "us",
    "russia": "ru",
    "россия": "ru",
    "turkey": "tr",
    "turkiye": "tr",
    "holland": "nl",
    "thenetherlands": "nl",
    "ivorycoast": "ci",
    "cotedivoire": "ci",
    "uae": "ae",
    "emirates": "ae",
    "korea": "kr",
    "southkorea": "kr",
    "northkorea": "kp",
    "burma": "mm",
    "czechrepublic": "cz",
    "macedonia": "mk",
    "vatican": "va",
    "vaticancity": "va",
    "palestine": "ps",
    "swaziland": "sz",
    "capeverde": "cv",
    "easttimor": "tl",
    "drc": "cd",
    "drcongo": "cd",
    "congokinshasa": "cd",
    "congobrazzaville": "cg",
    "deutschland": "de",
    "brasil": "br",
    "méxico": "mx",
    "españa": "es",
    "italia": "it",
    "schweiz": "ch",
    "suisse": "ch",
    "svizzera": "ch",
    "österreich": "at",
    "nederland": "nl",
    "belgië": "be",
    "belgique": "be",
    "sverige": "se",
    "norge": "no",
    "danmark": "dk",
    "suomi": "fi",
    "polska": "pl",
    "česko": "cz",
    "magyarország": "hu",
    "ελλάδα": "gr",
    "éire": "ie",
    "日本": "jp",
    "中国": "cn",
    "한국": "kr",
    "대한민국": "kr",
    "भारत": "in",
    "việtnam": "vn",
    "perú": "pe",
    "panamá": "pa",
    "türkiye": "tr",
}
# Languages whose country names forms use: pycountry's own translations of every country.
_LOCALES = (
    "de fr es pt pt_BR it nl pl sv da nb fi cs sk hu ro el tr ru uk ja zh_CN zh_TW ko ar he hi id "
    "ms th vi bg hr sr sl et lv lt ca"
).split()


def loose(text: str) -> str:
    """A name as lookups compare it, never as it is hashed: squashed, casefolded, with
    combining marks (accents, Arabic and Hebrew vowel points, Indic vowel signs) removed,
    and the Turkish dotted and dotless i both read as i, so `Turkiye`, `TÜRKİYE` and
    `türkiye` meet, as do a name typed with or without its vowel marks."""
    text = squash(text.replace("İ", "i").replace("ı", "i"))
    text = unicodedata.normalize("NFKD", text.casefold())
    return _bare("".join(ch for ch in text if not unicodedata.combining(ch)))


# Words forms add around a country's name: `Republic of Korea`, `Hong Kong SAR`, `The Gambia`.
_PREFIXES = ("the", "republicof", "kingdomof", "stateof")
_SUFFIXES = ("sarchina", "sar", "republic")


def _bare(name: str) -> str:
    for prefix in _PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix) + 3:
            name = name[len(prefix) :]
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix) + 3:
            name = name[: -len(suffix)]
    return name


@functools.cache
def _country_table() -> dict[str, str]:
    """Loose name (`loose`) → alpha-2: pycountry's names in English and in _LOCALES, and
    CLDR's name of every territory in every language Babel ships (about 300): a form
    filled in Thai, Amharic or Tagalog names its country in its own language.

    Built on the first name the quick lookups miss (reading the locales takes ~0.6 s, once
    per process). A name that means two countries in two languages is left out, never
    guessed.
    """
    candidates: dict[str, set[str]] = {}
    translators: list[gettext.NullTranslations | None] = [None]
    for locale in _LOCALES:
        try:
            translators.append(gettext.translation("iso3166-1", pycountry.LOCALES_DIR, languages=[locale]))
        except OSError:
            continue
    for entry in pycountry.countries:
        names = {entry.name, getattr(entry, "common_name", entry.name), getattr(entry, "official_name", entry.name)}
        for translator in translators:
            for name in names:
                text = translator.gettext(name) if translator else name
                candidates.setdefault(loose(text), set()).add(entry.alpha_2.lower())
    ambiguous = {name for name, codes in candidates.items() if len(codes) > 1}
    table = {name: codes.pop() for name, codes in candidates.items() if len(codes) == 1 and name}
    # CLDR's names fill in what pycountry's leave out; pycountry's stay as they were (a
    # name CLDR gives another country in some language does not take them away).
    known = {entry.alpha_2 for entry in pycountry.countries}
    cldr: dict[str, set[str]] = {}
    for language in (i for i in localedata.locale_identifiers() if "_" not in i):
        try:
            territories = Locale.parse(language).territories
        except (ValueError, KeyError, babel.UnknownLocaleError):
            continue
        for code, name in territories.items():
            if code in known:  # not a region (`001`), nor an alternative key
                cldr.setdefault(loose(name), set()).add(code.lower())
    taken = set(table) | ambiguous
    table.update({name: codes.pop() for name, codes in cldr.items() if len(codes) == 1 and name and name not in taken})
    table.update({loose(name): code for name, code in COUNTRY_NAMES.items()})
    return table


# ISO codes as sets and a dict: pycountry's own lookup costs more than all the rest of a
# country's normalisation, and every lead's country is read twice.
_ALPHA_2 = frozenset(entry.alpha_2.lower() for entry in pycountry.countries)
_ALPHA_3 = {entry.alpha_3.lower(): entry.alpha_2.lower() for entry in pycountry.countries}


# Endonyms in the Latin letters people type them in, where CLDR's name in the country's
# own language differs (https://en.wikipedia.org/wiki/List_of_countries_and_dependencies_and_their_capitals_in_native_languages).
# Wales names the United Kingdom here as `wales` does above.
ENDONYMS = {
    squash(name): code
    for name, code in {
        "Shqipëria": "al",
        "Shqiperia": "al",
        "Cymru": "gb",
        "Sakartvelo": "ge",
        "Hayastan": "am",
        "Bharat": "in",
        "Nippon": "jp",
        "Nihon": "jp",
        "Zhongguo": "cn",
        "Hanguk": "kr",
        "Daehan Minguk": "kr",
        "Makedonija": "mk",
        "Severna Makedonija": "mk",
        "Al-Maghrib": "ma",
        "Tounes": "tn",
        "Misr": "eg",
        "Prathet Thai": "th",
    }.items()
}
COUNTRY_NAMES.update(ENDONYMS)


# Short names two countries share: "Congo" is said of the Republic of the Congo and of the
# Democratic Republic of the Congo alike (https://en.wikipedia.org/wiki/Congo): neither.
SHARED_NAMES = frozenset({"congo"})


@functools.lru_cache(maxsize=4096)  # a form's leads name a handful of countries, over and over
def country(text: str) -> str | None:
    """ISO 3166-1 alpha-2, lowercase, or None when no country goes by that name."""
    name = squash(text)
    if name in SHARED_NAMES:
        return None
    if len(name) == 2 and name.isascii():
        return name if name in _ALPHA_2 else COUNTRY_NAMES.get(name)
    if len(name) == 3 and name.isascii() and name not in COUNTRY_NAMES:
        found = _ALPHA_3.get(name)
        if found:
            return found
    found = COUNTRY_NAMES.get(name) or _country_table().get(loose(text))
    if found:
        return found
    unwrapped = _unwrapped(name)  # `日本国`, `Монгол Улс`, `ประเทศไทย`: the name inside
    return (COUNTRY_NAMES.get(unwrapped) or _country_table().get(loose(unwrapped))) if unwrapped else None


# Words a country's official or long form wraps its name in, in scripts the Latin
# prefixes above do not cover: Japanese and Chinese 国 ("country", `日本国`), Mongolian улс
# ("state", `Монгол Улс`), Thai ประเทศ ("country", `ประเทศไทย`). Only taken off when
# what is left is a country's name.
_WRAPPERS = (("", "国"), ("", "улс"), ("ประเทศ", ""))


def _unwrapped(name: str) -> str | None:
    for prefix, suffix in _WRAPPERS:
        if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(prefix) + len(suffix) + 1:
            return name[len(prefix) : len(name) - len(suffix)]
    return None
