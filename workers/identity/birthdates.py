"""Dates of birth as people and forms write them, to Meta's `YYYYMMDD`.

A tokeniser instead of a list of `strptime` formats: the text is cut into numbers and
words, and any shape whose reading is certain is accepted, in any order and with any
separators: a 4-digit year, a part above 12, or a month name (in the languages of the
month table below) settles it. `1997/02/16`, `16-Feb-1997`, `19th April 1987`,
`19 de abril de 1987` and `1997-02-16T00:00:00Z` all work.

Truly ambiguous dates (`04/07/1992`: both parts 12 or less, the year last) follow the
order the lead's country writes dates in, from CLDR (`order_of`: the short date pattern of
the country's main language; Ghana, New Zealand and Britain day first, the US and the
Philippines month first). With no country to decide, or one whose short dates put the
year first (Canada, Japan: both orders are met there), the date is dropped as
`ambiguous_date`: a wrong date is a hash of another person, worse than none. A two-digit
year is read only where it is the one part above 31 and one century alone makes it a
plausible year (`31/12/79`: 1979, as 2079 is to come); else it is refused (`04/05/07` could
be three different days), as are impossible or implausible dates (before 1900, in the
future).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from datetime import date

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
_ISO_DATE = re.compile(r"((?:19|20)\d\d)-?(\d\d)-?(\d\d)")
_ISO_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ]\d{2}:\d{2}")


class NotADate(ValueError):
    """`reason` is `unknown_date_format` or `implausible_birth_date`."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _plain(word: str) -> str:
    """A word as the tables compare it: lowercase, marks removed, then recomposed (so a
    Hangul syllable stays one character)."""
    bare = "".join(ch for ch in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", bare)


def _tokens(text: str) -> list[str]:
    """Numbers and words: a run of digits (any script's), or of letters with their marks
    (a Thai or Devanagari word keeps its vowel signs, which a regex's \\w would cut at)."""
    out, current, kind = [], [], None
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


FILLER = frozenset(_plain(word) for word in _FILLER_WORDS.split())
# Eras a date of birth may be written in: the year before each era's first (its year 1 is
# that plus one). Japan's (CLDR's japanese calendar: Meiji 1868, Taisho 1912, Showa 1926,
# Heisei 1989, Reiwa 2019) and the Republic of China's (民國 1 is 1912). The Thai solar
# calendar counts from 543 BC: `พ.ศ. 2535` is 1992.
ERAS = {
    _plain(name): year
    for name, year in {
        "明治": 1867,
        "大正": 1911,
        "昭和": 1925,
        "平成": 1988,
        "令和": 2018,
        "民國": 1911,
        "民国": 1911,
    }.items()
}
_BUDDHIST_ERA = "พ.ศ."
BUDDHIST_OFFSET = 543


@functools.cache
def _fillers() -> frozenset[str]:
    """Words that only mark a date's parts: the table above, and every word CLDR's date
    patterns write around the numbers in any language Babel ships (Kazakh `ж.`, Mongolian
    `оны`, Armenian `թ.`, Lithuanian `m.` and `d.`, Latvian `gada`), and the ordinal
    indicators (`1º`). Never a month word: those are read, not skipped."""
    words = set(FILLER) | {_plain("º"), _plain("ª")}  # as compared: NFKD reads them as o and a
    for locale in _locales():
        for width in ("full", "long", "medium", "short"):
            try:
                pattern = locale.date_formats[width].pattern
            except (KeyError, AttributeError):
                continue
            # Literals: quoted ('ж'), or any letters but the ASCII ones CLDR keeps for
            # its fields (Armenian թ. is written bare).
            literals = re.findall(r"'([^']+)'", pattern) + [re.sub(r"'[^']*'|[A-Za-z]", " ", pattern)]
            for literal in literals:
                words.update(_plain(t) for t in _tokens(literal) if not t.isdigit())
    return frozenset(words - set(_month_meanings()))


def parse(text: str, today: date | None = None, country: str | None = None) -> str:
    """`YYYYMMDD` for a date of birth. `country` (ISO alpha-2: the lead's) decides what the
    text leaves open: the order of a day and a month that could be swapped (`order_of`),
    and a month word that is another month in another language (`listopada`).

    Raises:
        NotADate: the shape is ambiguous (`ambiguous_date`, `ambiguous_month`) or unknown,
            or the date impossible or implausible.
    """
    text = text.strip()
    plain = _ISO_DATE.fullmatch(text)  # 1997-02-16 and 19970216, the shapes date inputs send
    if plain:
        return _checked(int(plain.group(1)), int(plain.group(2)), int(plain.group(3)), today)
    iso = _ISO_DATETIME.match(text)
    if iso:
        text = "-".join(iso.groups())
    buddhist = _BUDDHIST_ERA in text.replace(" ", "")  # พ.ศ. 2535: the Thai solar calendar's year
    if buddhist:
        text = text.replace(_BUDDHIST_ERA, " ")
    numbers, month, era = [], None, None
    for token in _tokens(text):
        if token.isdigit():
            number = int(token)
            if era is not None:  # 平成4年, 民國81年: the era's year, as a Gregorian one
                number, era = era + number, None
            elif buddhist and len(token) == 4:
                number -= BUDDHIST_OFFSET
            numbers.append(str(number).zfill(len(token) if number < 1000 else 4))  # any script's digits, as ASCII
            continue
        word = _plain(token)
        if country and word in _locale_weekdays(country.upper()):
            continue  # the lead's own language says it is a weekday (Tok Pisin `Fra`, February elsewhere)
        named = _month(word, country)
        if word in ERAS and era is None and not numbers:
            era = ERAS[word]
        elif named and month is None:
            month = named
        elif word not in _fillers() and word not in _cldr_weekdays():
            raise NotADate("unknown_date_format")
    if month is None and len(numbers) == 1 and len(numbers[0]) == 8:
        whole = numbers[0]  # 19970216, else 16021997
        numbers = (
            [whole[:4], whole[4:6], whole[6:]] if whole[:2] in ("19", "20") else [whole[:2], whole[2:4], whole[4:]]
        )
    numbers = _with_century(numbers, today or date.today())
    year, month, day = _year_month_day(numbers, month, order_of(country))
    return _checked(year, month, day, today)


MAJORITY = 0.9  # of the languages that use a month word, how many must mean one month by it


def _month(word: str, country: str | None) -> int | None:
    """The month a word names: as the lead's country's main language names it when that
    language has the word; else the meaning nearly every language that uses the word gives
    it (`jan` is January in dozens, June in Sesotho alone); a word two languages share for
    two months (`listopada`: October in Croatian, November in Polish) reads as nothing.

    Raises:
        NotADate: `ambiguous_month`, for such a word with nothing to decide it.
    """
    if country:
        local = _locale_months(country.upper()).get(word)
        if local:
            return local
    meanings = _month_meanings().get(word)
    if not meanings:
        return None
    month, users = meanings.most_common(1)[0]
    if users >= MAJORITY * sum(meanings.values()):
        return month
    raise NotADate("ambiguous_month")


def _with_century(numbers: list[str], today: date) -> list[str]:
    """A two-digit year read only when it is certain: it is the one part above 31 (so it is
    the year), and exactly one century makes it a year of birth Meta accepts (1900 to this
    year): `31/12/79` is 1979 (2079 is to come); `12/31/15` (1915 or 2015) stays unread."""
    if any(len(n) == 4 for n in numbers) or len(numbers) != 3 or any(len(n) > 2 for n in numbers):
        return numbers
    years = [i for i, n in enumerate(numbers) if int(n) > 31]
    if len(years) != 1:
        return numbers
    two = int(numbers[years[0]])
    centuries = [c + two for c in (1900, 2000) if 1900 <= c + two <= today.year]
    if len(centuries) != 1:
        return numbers
    return [str(centuries[0]) if i == years[0] else n for i, n in enumerate(numbers)]


def _year_month_day(numbers: list[str], month: int | None, order: str | None) -> tuple[int, int, int]:
    """(year, month, day) from the numbers; `month` given when a word named it."""
    where = [i for i, n in enumerate(numbers) if len(n) == 4]
    if len(where) != 1 or any(len(n) > 2 for i, n in enumerate(numbers) if i != where[0]):
        raise NotADate("unknown_date_format")
    year = int(numbers[where[0]])
    rest = [int(n) for i, n in enumerate(numbers) if i != where[0]]
    if month is not None:
        if len(rest) != 1:
            raise NotADate("unknown_date_format")
        return year, month, rest[0]
    if len(rest) != 2:
        raise NotADate("unknown_date_format")
    first, second = rest
    if where[0] == 0 or (first <= 12 < second):
        return year, first, second  # year first is always year, month, day
    if second <= 12 < first:
        return year, second, first
    if first == second:
        return year, first, second  # 04/04/1992: either way the same day
    # Both could be the month: only the lead's country decides (see the module's docstring).
    if order is None:
        raise NotADate("ambiguous_date")
    return (year, first, second) if order == "mdy" else (year, second, first)


@functools.cache
def order_of(country: str | None) -> str | None:
    """How `country` (ISO alpha-2) writes a date whose year comes last: "dmy" or "mdy", from
    the short date pattern of its most spoken official language in CLDR; None when nothing
    says (no country, or its short dates put the year first)."""
    locale = _main_locale(country.upper()) if country else None
    pattern = locale.date_formats["short"].pattern if locale else ""
    letters = [ch for ch in pattern if ch in "dMy"]
    order = "".join(dict.fromkeys(letters))
    return {"dMy": "dmy", "Mdy": "mdy"}.get(order)


def _main_locale(territory: str):
    languages = babel.core.get_global("territory_languages").get(territory, {})
    official = [name for name, v in languages.items() if v.get("official_status") in ("official", "de_facto_official")]
    ranked = sorted(official or languages, key=lambda name: -languages[name].get("population_percent", 0))
    for language in ranked:
        try:
            return Locale.parse(f"{language}_{territory}")
        except (ValueError, KeyError, babel.UnknownLocaleError):
            continue
    return None


def _checked(year: int, month: int, day: int, today: date | None) -> str:
    try:
        born = date(year, month, day)
    except ValueError:
        raise NotADate("implausible_birth_date") from None
    if not date(1900, 1, 1) <= born <= (today or date.today()):
        raise NotADate("implausible_birth_date")
    return f"{year:04d}{month:02d}{day:02d}"


@functools.cache
def _month_meanings() -> dict[str, Counter]:
    """Each month word (as the tokeniser cuts it, lowercase, unmarked) and how many
    languages mean each month by it: CLDR's names in every language Babel ships, and the
    hand table above, each of its words one more language (it holds spellings CLDR lacks,
    `fevrier` without accents). Not the filler words, nor two Latin letters."""
    found: dict[str, Counter] = {}
    for locale in _locales():
        for word, number in _names(locale).items():
            found.setdefault(word, Counter())[number] += 1
    for word, number in MONTHS.items():
        found.setdefault(word, Counter())[number] += 1
    return {w: c for w, c in found.items() if w not in FILLER and (len(w) > 2 or not w.isascii() or w in MONTHS)}


@functools.cache
def _locale_months(territory: str) -> dict[str, int]:
    """The month words of a country's main language."""
    locale = _main_locale(territory)
    return _names(locale) if locale else {}


def _names(locale) -> dict[str, int]:
    """A language's month names and abbreviations, one word each, as the tokeniser cuts them."""
    out: dict[str, int] = {}
    for context in ("format", "stand-alone"):
        for width in ("wide", "abbreviated"):
            for number, name in locale.months[context][width].items():
                tokens = _tokens(name)
                if len(tokens) == 1 and not tokens[0].isdigit():
                    out.setdefault(_plain(tokens[0]), number)
    return out


@functools.cache
def _locale_weekdays(territory: str) -> frozenset[str]:
    """The weekday names of a country's main language."""
    locale = _main_locale(territory)
    if locale is None:
        return frozenset()
    names = [n for width in ("wide", "abbreviated") for n in locale.days["format"][width].values()]
    return frozenset(_plain(t) for name in names for t in _tokens(name) if not t.isdigit()) - set(_names(locale))


@functools.cache
def _cldr_weekdays() -> frozenset[str]:
    """Weekday names in every language Babel ships: a date written with its weekday
    (`Sunday, 16 February 1997`, `日曜日`) is read without it."""
    words = set()
    for locale in _locales():
        for width in ("wide", "abbreviated"):
            for name in locale.days["format"][width].values():
                words.update(_plain(token) for token in _tokens(name) if not token.isdigit())
    return frozenset(words - set(_month_meanings()))


def _locales() -> list:
    out = []
    for language in (i for i in localedata.locale_identifiers() if "_" not in i):
        try:
            out.append(Locale.parse(language))
        except (ValueError, KeyError, babel.UnknownLocaleError):
            continue
    return out
