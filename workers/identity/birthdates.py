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

import re
import unicodedata
from datetime import date

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
# Words that carry no date: ordinal suffixes and the "of"/"de" of written dates.
FILLER = frozenset("st nd rd th er de del of the le den der di do da el".split())
_TOKEN = re.compile(r"\d+|[^\W\d_]+")
_ISO_DATE = re.compile(r"((?:19|20)\d\d)-?(\d\d)-?(\d\d)")
_ISO_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ]\d{2}:\d{2}")


class NotADate(ValueError):
    """`reason` is `unknown_date_format` or `implausible_birth_date`."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _plain(word: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(ch))


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
    for token in _TOKEN.findall(text):
        if token.isdigit():
            numbers.append(token)
            continue
        word = _plain(token)
        if word in MONTHS and month is None:
            month = MONTHS[word]
        elif word not in FILLER:
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
