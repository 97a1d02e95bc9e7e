"""The words and orders CLDR gives for writing dates, per language and country.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter

import babel
from babel import Locale, localedata

_MONTH_WORDS = {
    1: "january jan january janvier janv janvier enero ene janeiro gennaio gen januar jänner jaenner januari "
    "styczen stycznia ocak",
    2: "february feb febr fevrier fev febrero febrer fevereiro fevereiro febbraio februar februari luty lutego subat",
    3: "march mar mars marzo marco marz maerz mrz maart marca marzec mart",
    4: "april apr avril avr abril abr aprile aprilis kwiecien kwietnia nisan",
    5: "may mai mayo maio maggio mag mei maj maja mayis",
    6: "june jun juin junio junho giugno giu juni czerwiec czerwca haziran",
    7: "july jul juillet juil julio julho luglio lug juli lipiec lipca temmuz",
    8: "august aug aout agosto ago augustus sierpien sierpnia agustos",
    9: "september sep sept septembre septiembre setiembre set setembro settembre wrzesien wrzesnia eylul",
    10: "october oct octobre octubre outubro out ottobre ott oktober okt pazdziernik pazdziernika ekim",
    11: "november nov novembre noviembre novembro listopad listopada kasim",
    12: "december dec decembre diciembre dic dezembro dez dicembre dezember grudzien grudnia aralik",
}


# One table: month word (lowercase, accents stripped) → month number.
MONTHS = {word: number for number, words in _MONTH_WORDS.items() for word in words.split()}


# Words that carry no date: ordinal suffixes, the "of"/"de" of written dates, and the
# markers some languages write after each part (1997年2月16日, 1997년 2월 16일, ngày 16
# tháng 2 năm 1997, 16 февраля 1997 г.).
_FILLER_WORDS = (
    "st nd rd th er de del of the le den der di do da el 年 月 日 년 월 일 ngày tháng năm г года goda r roku "
    "yil yılı ano"
)


def plain(word: str) -> str:
    """A word as the tables compare it: lowercase, marks removed, then recomposed (so a
    Hangul syllable stays one character)."""
    bare = "".join(ch for ch in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", bare)


def tokens(text: str) -> list[str]:
    """Numbers and words: a run of digits (any script's), or of letters with their marks
    (a Thai or Devanagari word keeps its vowel signs, which a regex's \\w would cut at)."""
    out: list[str] = []
    current: list[str] = []
    kind = None
    for ch in text:
        category = unicodedata.category(ch)
        now = "n" if category == "Nd" else "w" if category[0] in "LM" else None
        if now != kind or now is None:
            if current:
                out.append("".join(current))
            current, kind = [], now
        if now:
            current.append(ch)
    if current:
        out.append("".join(current))
    return out


FILLER = frozenset(plain(word) for word in _FILLER_WORDS.split())


# Eras a date of birth may be written in: the year before each era's first (its year 1 is
# that plus one). Japan's (CLDR's japanese calendar: Meiji 1868, Taisho 1912, Showa 1926,
# Heisei 1989, Reiwa 2019) and the Republic of China's (民國 1 is 1912). The Thai solar
# calendar counts from 543 BC: `พ.ศ. 2535` is 1992.
ERAS = {
    plain(name): year
    for name, year in {
        "明治": 1867,
        "大正": 1911,
        "昭和": 1925,
        "平成": 1988,
        "令和": 2018,
        "民國": 1911,
        "民国": 1911,
        "中華民國": 1911,
        "中华民国": 1911,
    }.items()
}


# Japan's era initials (`H4.5.20`: Heisei 4), read for Japanese leads only: elsewhere a
# letter before a number is no era. https://en.wikipedia.org/wiki/Japanese_era_name
JAPANESE_ERA_INITIALS = {"m": 1867, "t": 1911, "s": 1925, "h": 1988, "r": 2018}
FIRST_YEAR = re.compile("(明治|大正|昭和|平成|令和)元年")  # 元年: an era's first year
# Roman-numeral months (`20.V.1992`, Poland, Italy, the Balkans), in capitals only.
ROMAN_MONTHS = {numeral: n for n, numeral in enumerate("I II III IV V VI VII VIII IX X XI XII".split(), 1)}
CHRISTIAN_ERA = "ค.ศ."  # Thai: the Gregorian year, said so

BUDDHIST_ERA = "พ.ศ."


BUDDHIST_OFFSET = 543


@functools.cache
def fillers() -> frozenset[str]:
    """Words that only mark a date's parts: the table above, and every word CLDR's date
    patterns write around the numbers in any language Babel ships (Kazakh `ж.`, Mongolian
    `оны`, Armenian `թ.`, Lithuanian `m.` and `d.`, Latvian `gada`), and the ordinal
    indicators (`1º`). Never a month word: those are read, not skipped."""
    words = set(FILLER) | {plain("º"), plain("ª")}  # as compared: NFKD reads them as o and a
    for locale in locales():
        for width in ("full", "long", "medium", "short"):
            try:
                pattern = locale.date_formats[width].pattern
            except (KeyError, AttributeError):
                continue
            # Literals: quoted ('ж'), or any letters but the ASCII ones CLDR keeps for
            # its fields (Armenian թ. is written bare).
            literals = re.findall(r"'([^']+)'", pattern) + [re.sub(r"'[^']*'|[A-Za-z]", " ", pattern)]
            for literal in literals:
                words.update(plain(t) for t in tokens(literal) if not t.isdigit())
    return frozenset(words - set(month_meanings()))


@functools.cache
def month_markers() -> frozenset[str]:
    """Words that make the number before them the month: where CLDR writes a month as its
    number and a word (Japanese `7月`, Korean `7월`, Mongolian `7-р сар`), that word, and the
    word with the ending a language's date patterns put after a month (Mongolian `'ын'` in
    `MMMM'ын'`: `7 сарын 4`, the 4th of the 7th month)."""
    found: set[str] = set()
    for locale in locales():
        markers: set[str] = set()
        for context in ("format", "stand-alone"):
            for width in ("wide", "abbreviated"):
                for number, name in locale.months[context][width].items():
                    cut = tokens(name)
                    if str(number) in cut:  # only words after the number (Vietnamese `tháng 7` is before)
                        markers.update(plain(t) for t in cut[cut.index(str(number)) + 1 :] if not t.isdigit())
        endings = set()
        for width in ("full", "long", "medium", "short"):
            try:
                endings.update(re.findall(r"M{3,4}'([^']+)'", locale.date_formats[width].pattern))
            except (KeyError, AttributeError):
                continue
        found |= markers | {marker + plain(ending) for marker in markers for ending in endings}
    return frozenset(found)


@functools.cache
def order_of(country: str | None) -> str | None:
    """How `country` (ISO alpha-2) writes a date whose year comes last: "dmy" or "mdy", from
    the short date pattern of its most spoken official language in CLDR; None when nothing
    says (no country, or its short dates put the year first)."""
    locale = main_locale(country.upper()) if country else None
    pattern = locale.date_formats["short"].pattern if locale else ""
    letters = [ch for ch in pattern if ch in "dMy"]
    order = "".join(dict.fromkeys(letters))
    return {"dMy": "dmy", "Mdy": "mdy"}.get(order)


def main_locale(territory: str):
    languages = babel.core.get_global("territory_languages").get(territory, {})
    official = [name for name, v in languages.items() if v.get("official_status") in ("official", "de_facto_official")]
    ranked = sorted(official or languages, key=lambda name: -languages[name].get("population_percent", 0))
    for language in ranked:
        try:
            return Locale.parse(f"{language}_{territory}")
        except (ValueError, KeyError, babel.UnknownLocaleError):
            continue
    return None


@functools.cache
def month_meanings() -> dict[str, Counter]:
    """Each month word (as the tokeniser cuts it, lowercase, unmarked) and how many
    languages mean each month by it: CLDR's names in every language Babel ships, and the
    hand table above, each of its words one more language (it holds spellings CLDR lacks,
    `fevrier` without accents). Not the filler words, nor two Latin letters."""
    found: dict[str, Counter] = {}
    for locale in locales():
        for word, number in names(locale).items():
            found.setdefault(word, Counter())[number] += 1
    for word, number in MONTHS.items():
        found.setdefault(word, Counter())[number] += 1
    return {w: c for w, c in found.items() if w not in FILLER and (len(w) > 2 or not w.isascii() or w in MONTHS)}


@functools.cache
def locale_months(territory: str) -> dict[str, int]:
    """The month words of a country's main language."""
    locale = main_locale(territory)
    return names(locale) if locale else {}


def names(locale) -> dict[str, int]:
    """A language's month names and abbreviations, one word each, as the tokeniser cuts them."""
    out: dict[str, int] = {}
    for context in ("format", "stand-alone"):
        for width in ("wide", "abbreviated"):
            for number, name in locale.months[context][width].items():
                cut = tokens(name)
                if len(cut) == 1 and not cut[0].isdigit():
                    out.setdefault(plain(cut[0]), number)
    return out


@functools.cache
def locale_weekdays(territory: str) -> frozenset[str]:
    """The weekday names of a country's main language."""
    locale = main_locale(territory)
    if locale is None:
        return frozenset()
    days = [n for width in ("wide", "abbreviated") for n in locale.days["format"][width].values()]
    return frozenset(plain(t) for day in days for t in tokens(day) if not t.isdigit()) - set(names(locale))


@functools.cache
def cldr_weekdays() -> frozenset[str]:
    """Weekday names in every language Babel ships: a date written with its weekday
    (`Sunday, 16 February 1997`, `日曜日`) is read without it."""
    words: set[str] = set()
    for locale in locales():
        for width in ("wide", "abbreviated"):
            for name in locale.days["format"][width].values():
                words.update(plain(token) for token in tokens(name) if not token.isdigit())
    return frozenset(words - set(month_meanings()))


def locales() -> list:
    out = []
    for language in (i for i in localedata.locale_identifiers() if "_" not in i):
        try:
            out.append(Locale.parse(language))
        except (ValueError, KeyError, babel.UnknownLocaleError):
            continue
    return out
