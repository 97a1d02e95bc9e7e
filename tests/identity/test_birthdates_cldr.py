"""For every country and any date, our reading of that country's own ways of writing it
(CLDR's short, medium, long and full date formats of its main language, via babel) is that date
or nothing, never another date: an ambiguous order is read as the country writes it, and
what cannot be read is dropped."""

from datetime import date

import babel
from babel.core import get_global
from babel.dates import format_date
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.identity import birthdates, calendarwords

TERRITORIES = sorted(t for t in get_global("territory_languages") if calendarwords.main_locale(t) is not None)


@given(territory=st.sampled_from(TERRITORIES), born=st.dates(date(1901, 1, 1), date(2010, 12, 31)))
@settings(max_examples=2000)
def test_a_countrys_own_forms_read_as_the_date_or_nothing(territory, born):
    locale = calendarwords.main_locale(territory)
    for width in ("short", "medium", "long", "full"):
        try:
            written = format_date(born, width, locale=locale)
        except (babel.UnknownLocaleError, KeyError, ValueError):
            continue
        try:
            read = birthdates.parse(written, today=date(2026, 1, 1), country=territory)
        except birthdates.NotADate:
            continue  # nothing: dropped, never guessed
        assert read == born.strftime("%Y%m%d"), (territory, width, written, read)


def test_every_country_with_a_cldr_locale_is_covered():
    assert len(TERRITORIES) > 200
