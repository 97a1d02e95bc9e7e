"""Dates of birth in the Solar Hijri and Umm al-Qura calendars, read where the lead's
country writes them (Iran, Afghanistan; Saudi Arabia), and nowhere else."""

from datetime import date, timedelta

import hijridate
import jdatetime
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workers.identity import birthdates

TODAY = date(2026, 11, 26)


@pytest.mark.parametrize(
    "text, country, expected",
    [
        # Nowruz, 1 Farvardin, the Persian new year: 21 March 1991 and 20 March 2024
        # (https://www.timeanddate.com/holidays/iran/nowruz).
        ("1370/01/01", "ir", "19910321"),
        ("1403/01/01", "ir", "20240320"),
        ("۱۳۷۰/۰۱/۰۱", "ir", "19910321"),  # in Persian digits, as Iranians type them
        ("1370-01-01", "af", "19910321"),  # Afghanistan's official calendar too
        # 1 Muharram 1446 in Saudi Arabia's Umm al-Qura calendar: 7 July 2024
        # (https://www.timeanddate.com/holidays/saudiarabia/muharram).
        ("1446/01/01", "sa", "20240707"),
        ("01/01/1446", "sa", "20240707"),  # day first, as Saudi forms write it
    ],
)
def test_a_year_of_the_countrys_calendar_is_read_in_it(text, country, expected):
    assert birthdates.parse(text, TODAY, country) == expected


@pytest.mark.parametrize("country", [None, "de", "us", "eg"])
def test_elsewhere_such_a_year_is_no_year_of_birth(country):
    with pytest.raises(birthdates.NotADate):
        birthdates.parse("1370/01/01", TODAY, country)


def test_a_day_the_calendar_does_not_have_is_refused():
    with pytest.raises(birthdates.NotADate):
        birthdates.parse("1370/07/31", TODAY, "ir")  # the Persian 7th month has 30 days


DAYS = st.integers(0, (TODAY - date(1900, 1, 1)).days).map(lambda n: date(1900, 1, 1) + timedelta(days=n))


@given(born=DAYS, separator=st.sampled_from("/-."))
def test_every_persian_date_of_birth_reads_as_its_own_day(born, separator):
    persian = jdatetime.date.fromgregorian(date=born)
    text = separator.join((str(persian.year), f"{persian.month:02d}", f"{persian.day:02d}"))
    assert birthdates.parse(text, TODAY, "ir") == born.strftime("%Y%m%d")


@given(born=DAYS.filter(lambda d: d >= date(1937, 3, 14)))  # hijridate's Umm al-Qura range
def test_every_umm_al_qura_date_of_birth_reads_as_its_own_day(born):
    hijri = hijridate.Gregorian(born.year, born.month, born.day).to_hijri()
    text = f"{hijri.year}/{hijri.month:02d}/{hijri.day:02d}"
    assert birthdates.parse(text, TODAY, "sa") == born.strftime("%Y%m%d")
