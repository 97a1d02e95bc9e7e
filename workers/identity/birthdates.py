"""Dates of birth as people and forms write them, to Meta's `YYYYMMDD`.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

from babel.core import get_global

from workers.identity import calendars, calendarwords

_ISO_DATE = re.compile(r"((?:19|20)\d\d)-?(\d\d)-?(\d\d)")
_ISO_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ]\d{2}:\d{2}")
# A date picker's instant in UTC: `1990-01-20T23:00:00.000Z` is 21 January in Vienna.
_UTC_INSTANT = re.compile(
    r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(?:Z|[+-]00:?00)", re.IGNORECASE
)


def _local_day(day: str, clock: str, country: str | None) -> str:
    """The day a UTC instant falls on in the lead's country, when all its time zones agree
    (CLDR's zones per territory).

    Raises:
        NotADate: `ambiguous_date`: no country, or zones on either side of midnight.
    """
    zones = get_global("territory_zones").get((country or "").upper()) or []
    instant = datetime.fromisoformat(f"{day}T{clock}").replace(tzinfo=timezone.utc)
    days = {instant.astimezone(ZoneInfo(zone)).date().isoformat() for zone in zones}
    if len(days) != 1:
        raise NotADate("ambiguous_date")
    return days.pop()


class NotADate(ValueError):
    """`reason` is `unknown_date_format` or `implausible_birth_date`."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def parse(text: str, today: date | None = None, country: str | None = None) -> str:
    """`YYYYMMDD` for a date of birth. `country` (ISO alpha-2: the lead's) decides what the
    text leaves open: the order of a day and a month that could be swapped (`calendarwords.order_of`),
    and a month word that is another month in another language (`listopada`).

    Raises:
        NotADate: the shape is ambiguous (`ambiguous_date`, `ambiguous_month`) or unknown,
            or the date impossible or implausible.
    """
    text = text.strip()
    plain = _ISO_DATE.fullmatch(text)  # 1997-02-16 and 19970216, the shapes date inputs send
    if plain:
        return _checked(int(plain.group(1)), int(plain.group(2)), int(plain.group(3)), today)
    instant = _UTC_INSTANT.fullmatch(text)
    if instant:
        text = _local_day(instant.group(1), instant.group(2), country)
    iso = _ISO_DATETIME.match(text)
    if iso:
        text = "-".join(iso.groups())
    text = calendarwords.FIRST_YEAR.sub(r"\g<1>1年", text).replace(calendarwords.CHRISTIAN_ERA, " ")
    buddhist = calendarwords.BUDDHIST_ERA in text.replace(" ", "")  # พ.ศ. 2535: the Thai solar calendar's year
    if buddhist:
        text = text.replace(calendarwords.BUDDHIST_ERA, " ")
    numbers, month, era, after_number = [], None, None, False
    for token in calendarwords.tokens(text):
        was_number, after_number = after_number, token.isdigit()
        if token.isdigit():
            number = int(token)
            if era is not None:  # 平成4年, 民國81年: the era's year, as a Gregorian one
                number, era = era + number, None
            elif buddhist and len(token) == 4:
                number -= calendarwords.BUDDHIST_OFFSET
            numbers.append(str(number).zfill(len(token) if number < 1000 else 4))  # any script's digits, as ASCII
            continue
        word = calendarwords.plain(token)
        if token in calendarwords.ROMAN_MONTHS and month is None and numbers:
            month = calendarwords.ROMAN_MONTHS[token]  # 20.V.1992
            continue
        if country == "jp" and word in calendarwords.JAPANESE_ERA_INITIALS and era is None and not numbers:
            era = calendarwords.JAPANESE_ERA_INITIALS[word]  # H4.5.20
            continue
        if country and word in calendarwords.locale_weekdays(country.upper()):
            continue  # the lead's own language says it is a weekday (Tok Pisin `Fra`, February elsewhere)
        if was_number and month is None and word in calendarwords.month_markers() and len(numbers[-1]) <= 2:
            month = int(numbers.pop())  # 7月, 7월, 7 сарын: the number is the month
            continue
        named = _month(word, country)
        if word in calendarwords.ERAS and era is None and not numbers:
            era = calendarwords.ERAS[word]
        elif named and month is None:
            month = named
        elif word not in calendarwords.fillers() and word not in calendarwords.cldr_weekdays():
            raise NotADate("unknown_date_format")
    if month is None and len(numbers) == 1 and len(numbers[0]) == 8:
        whole = numbers[0]  # 19970216, else 16021997
        numbers = (
            [whole[:4], whole[4:6], whole[6:]] if whole[:2] in ("19", "20") else [whole[:2], whole[2:4], whole[4:]]
        )
    if country in _OWN_YEARS and any(len(n) == 2 for n in numbers) and not any(len(n) == 4 for n in numbers):
        raise NotADate("ambiguous_year")  # 79/08/11 from Taiwan: 1979, or the Republic's 79th (1990)
    numbers = _with_century(numbers, today or date.today())
    year, month, day = _year_month_day(numbers, month, calendarwords.order_of(country))
    if year < 1900:  # 1370/05/12 from Iran: a Solar Hijri year (calendars.py)
        year, month, day = _other_calendar(country, year, month, day, today)
    return _checked(year, month, day, today)


def _other_calendar(country: str | None, year: int, month: int, day: int, today: date | None) -> tuple[int, int, int]:
    try:
        found = calendars.gregorian(country, year, month, day, today or date.today())
    except ValueError:
        raise NotADate("implausible_birth_date") from None
    return (found.year, found.month, found.day) if found else (year, month, day)


_OWN_YEARS = frozenset({"tw"})  # two-digit years are as often the Republic of China's

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
        local = calendarwords.locale_months(country.upper()).get(word)
        if local:
            return local
    meanings = calendarwords.month_meanings().get(word)
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


_EARLIEST = date(1900, 1, 1)
_STARTED = date.today()  # any day before this is in the past for good: no clock read needed


def _checked(year: int, month: int, day: int, today: date | None) -> str:
    try:
        born = date(year, month, day)
    except ValueError:
        raise NotADate("implausible_birth_date") from None
    if born < _EARLIEST or (born > (today or _STARTED) and born > (today or date.today())):
        raise NotADate("implausible_birth_date")
    return f"{year:04d}{month:02d}{day:02d}"
