"""A postcode answer that is one code of the country's format is read in one look, as the
search through the whole answer reads it."""

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.identity import postcodes

PIECES = st.sampled_from(["1", "0", "9", "12", "123", "A", "SW", "K1A", "0AA", " ", "-", "PC", ".", "〒", "MD"])


def _outcome(value: str, country: str) -> str:
    try:
        return str(postcodes.read(value, country))
    except postcodes.NotAPostcode as err:
        return "!" + str(err)


COUNTRIES = st.sampled_from(["de", "gb", "br", "jp", "nl", "ca", "pl", "om", "md"])


@settings(max_examples=800, deadline=None)
@given(st.lists(PIECES, max_size=6).map("".join), COUNTRIES)
def test_an_answer_read_whole_reads_as_the_search_reads_it(value, country):
    """A trailing `,` leaves the search's reading as it is and turns the one look off."""
    assert _outcome(value, country) == _outcome(value + ",", country)


def test_a_code_of_the_format_is_the_answer():
    assert postcodes.read("SW1A 1AA", "gb") == "sw1a1aa"
    assert postcodes.read("80331", "de") == "80331"
    assert postcodes.read("80331 München", "de") == "80331"
