"""Years of calendars other than the Gregorian, where the lead's country writes dates in them
and the year can only be theirs.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

from datetime import date
from typing import Callable

import hijridate
import jdatetime


def _persian(year: int, month: int, day: int) -> date:
    return jdatetime.date(year, month, day).togregorian()


def _umm_al_qura(year: int, month: int, day: int) -> date:
    return hijridate.Hijri(year, month, day).to_gregorian()


def _persian_year(today: date) -> int:
    return jdatetime.date.fromgregorian(date=today).year


def _hijri_year(today: date) -> int:
    return hijridate.Gregorian(today.year, today.month, today.day).to_hijri().year


# country -> (the calendar's year in Gregorian 1900, its year today, conversion)
_CALENDARS: dict[str, tuple[int, Callable[[date], int], Callable[[int, int, int], date]]] = {
    "ir": (1278, _persian_year, _persian),
    "af": (1278, _persian_year, _persian),
    "sa": (1317, _hijri_year, _umm_al_qura),
}


def gregorian(country: str | None, year: int, month: int, day: int, today: date) -> date | None:
    """The Gregorian date of `year-month-day` in the calendar `country` writes dates in, when
    the year is one of that calendar's years of birth; None otherwise (not such a country,
    or a year outside it). A day the calendar does not have raises ValueError."""
    calendar = _CALENDARS.get(country or "")
    if calendar is None:
        return None
    first, current, convert = calendar
    if not first <= year <= current(today):
        return None
    try:
        return convert(year, month, day)
    except (ValueError, OverflowError) as err:
        raise ValueError(str(err)) from None
