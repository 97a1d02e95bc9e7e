"""Dates of birth as people and forms write them, to Meta's `YYYYMMDD`.

A tokeniser instead of a list of `strptime` formats: the text is cut into numbers and
words, and any shape whose reading is certain is accepted, in any order and with any
separators: a 4-digit year, a part above 12, or a month name (in the languages of the
month table below) settles it. `1997/02/16`, `16-Feb-1997`, `19th April 1987`,
`19 de abril de 1987` and `1997-02-16T00:00:00Z` all work.

Truly ambiguous dates (`03/04/1990`: both parts 12 or less) follow the separator: `/` is
read month first, as Meta's own example `2/16/1997` and US forms write it; `.` and `-`
day first, as most of the world writes them. Two-digit years are refused (`04/05/07`
could be three different days), as are impossible or implausible dates (before 1900, in
the future).
"""

from __future__ import annotations

import functools
import re
import unicodedata
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


def parse(text: str, today: date | None = None) -> str:
    """`YYYYMMDD` for a date of birth.

    Raises:
        NotADate: the shape is ambiguous or unknown, or the date impossible or implausible.
    """
    text = text.strip()
    plain = _ISO_DATE.fullmatch(text)  # 1997-02-16 and 19970216, the shapes date inputs send
    if plain:
        return _checked(int(plain.group(1)), int(plain.group(2)), int(plain.group(3)), today)
    iso = _ISO_DATETIME.match(text)
    if iso:
        text = "-".join(iso.groups())
    numbers, month = [], None
    for token in _tokens(text):
        if token.isdigit():
            numbers.append(str(int(token)).zfill(len(token)))  # any script's digits, as ASCII
            continue
        word = _plain(token)
        named = MONTHS.get(word) or _cldr_months().get(word)
        if named and month is None:
            month = named
        elif word not in FILLER and word not in _cldr_weekdays():
            raise NotADate("unknown_date_format")
    if month is None and len(numbers) == 1 and len(numbers[0]) == 8:
        whole = numbers[0]  # 19970216, else 16021997
        numbers = (
            [whole[:4], whole[4:6], whole[6:]] if whole[:2] in ("19", "20") else [whole[:2], whole[2:4], whole[4:]]
        )
    year, month, day = _year_month_day(numbers, month, _separator(text))
    return _checked(year, month, day, today)


def _year_month_day(numbers: list[str], month: int | None, separator: str) -> tuple[int, int, int]:
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
    # Both could be the month: the separator decides (see the module's docstring).
    return (year, first, second) if separator == "/" else (year, second, first)


def _separator(text: str) -> str:
    found = re.search(r"\d\s*([/.\-])", text)
    return found.group(1) if found else ""


def _checked(year: int, month: int, day: int, today: date | None) -> str:
    try:
        born = date(year, month, day)
    except ValueError:
        raise NotADate("implausible_birth_date") from None
    if not date(1900, 1, 1) <= born <= (today or date.today()):
        raise NotADate("implausible_birth_date")
    return f"{year:04d}{month:02d}{day:02d}"


@functools.cache
def _cldr_months() -> dict[str, int]:
    """Month names and abbreviations in every language Babel ships (CLDR), as the tokeniser
    cuts them (`двадцать` is not one; `二月`, `февраля`, `Şubat` are); the table above keeps
    precedence, and a word that is two months in two languages is left out. Built on the
    first word the table above does not know (~0.5 s, once per process)."""
    found: dict[str, set[int]] = {}
    for locale in _locales():
        for context in ("format", "stand-alone"):
            for width in ("wide", "abbreviated"):
                for number, name in locale.months[context][width].items():
                    tokens = _tokens(name)
                    if len(tokens) == 1 and not tokens[0].isdigit():
                        found.setdefault(_plain(tokens[0]), set()).add(number)
    # Not the filler words (`de` is December somewhere), nor two Latin letters: too many meanings.
    return {
        word: numbers.pop()
        for word, numbers in found.items()
        if len(numbers) == 1 and word not in MONTHS and word not in FILLER and (len(word) > 2 or not word.isascii())
    }


@functools.cache
def _cldr_weekdays() -> frozenset[str]:
    """Weekday names in every language Babel ships: a date written with its weekday
    (`Sunday, 16 February 1997`, `日曜日`) is read without it."""
    words = set()
    for locale in _locales():
        for width in ("wide", "abbreviated"):
            for name in locale.days["format"][width].values():
                words.update(_plain(token) for token in _tokens(name) if not token.isdigit())
    return frozenset(words - set(MONTHS) - set(_cldr_months()))


def _locales() -> list:
    out = []
    for language in (i for i in localedata.locale_identifiers() if "_" not in i):
        try:
            out.append(Locale.parse(language))
        except (ValueError, KeyError, babel.UnknownLocaleError):
            continue
    return out
