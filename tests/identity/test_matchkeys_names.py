"""Full names split into first and last: a title (the TITLES table, any language) or a
dotted abbreviation before a name is never sent as the first name; `Surname, Given` is
read that way round."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workers.identity import matchkeys

NAMES = st.text(alphabet=st.characters(categories=("Ll", "Lu", "Lo")), min_size=2, max_size=12)


def _split(full: str, country: str | None = None) -> dict:
    values: dict = {}
    matchkeys.split_full_name(values, [full], country)
    return values


@given(title=st.sampled_from(sorted(matchkeys.TITLES)), first=NAMES, last=NAMES, dot=st.booleans())
def test_no_title_is_ever_a_first_name(title, first, last, dot):
    if first.casefold() in matchkeys.TITLES:
        return  # a "name" that is itself a title: dropped as one, rightly
    split = _split(f"{title.upper() if dot else title}{'.' if dot else ''} {first} {last}")
    assert split["fn"] == [first] and split["ln"] == [last]


@given(abbreviation=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=5), first=NAMES, last=NAMES)
def test_a_dotted_abbreviation_before_a_name_is_never_a_first_name(abbreviation, first, last):
    if first.casefold() in matchkeys.TITLES:
        return
    assert _split(f"{abbreviation.title()}. {first} {last}")["fn"] == [first]


@pytest.mark.parametrize(
    "full, first, last",
    [
        ("Engr. Chukwuemeka Obi", "Chukwuemeka", "Obi"),  # Nigeria: an engineer's title
        ("Eng. Ahmad Al-Masri", "Ahmad", "Al-Masri"),  # Jordan
        ("Mensah, Kwame", "Kwame", "Mensah"),  # surname, comma, given name
        ("Obi , Chukwuemeka", "Chukwuemeka", "Obi"),
        ("J. Smith", "J.", "Smith"),  # an initial is the first name as written
    ],
)
def test_titles_and_name_order(full, first, last):
    assert _split(full) == {"fn": [first], "ln": [last]}


def test_a_suffix_after_a_comma_is_not_a_given_name():
    assert _split("Kwame Mensah, Jr.") == {"fn": ["Kwame"], "ln": ["Mensah"]}


@pytest.mark.parametrize(
    "full, expected",
    [
        ("王 小明", {"ln": ["王"], "fn": ["小明"]}),  # Chinese: family name first
        ("山田 太郎", {"ln": ["山田"], "fn": ["太郎"]}),  # Japanese
        ("김 민준", {"ln": ["김"], "fn": ["민준"]}),  # Korean
        ("王小明", {}),  # one word: where the family name ends is not certain, nothing is sent
        ("Nagy Péter", {"fn": ["Nagy"], "ln": ["Péter"]}),  # Latin letters, no country: given first
    ],
)
def test_names_in_scripts_that_write_the_family_name_first(full, expected):
    assert _split(full) == expected


# Vietnamese names are written family name first (Nguyễn Văn An: family Nguyễn, given An);
# https://en.wikipedia.org/wiki/Vietnamese_name. Hungarian ones too at home (Kovács Péter),
# but given first on forms in other languages: https://en.wikipedia.org/wiki/Hungarian_names
@pytest.mark.parametrize(
    "full, country, expected",
    [
        ("Nguyễn Văn An", "vn", {"ln": ["Nguyễn"], "fn": ["Văn An"]}),
        ("Trần Thị Mai", "vn", {"ln": ["Trần"], "fn": ["Thị Mai"]}),
        ("Nguyen Van An", "vn", {}),  # no Vietnamese letters: either order is possible
        ("Kovács Péter", "hu", {}),  # Hungarian: either order, whatever the letters
        ("Kovács, Péter", "hu", {"fn": ["Péter"], "ln": ["Kovács"]}),  # the comma decides
        ("Nguyễn", "vn", {}),  # one word: no first name to tell
        ("Kovács Péter", "de", {"fn": ["Kovács"], "ln": ["Péter"]}),  # Germany writes given first
    ],
)
def test_latin_names_where_the_country_writes_the_family_name_first(full, country, expected):
    assert _split(full, country) == expected


@given(first=NAMES, last=NAMES, country=st.sampled_from(["hu", "vn"]))
def test_an_order_nothing_decides_sends_neither_name_and_says_so(first, last, country):
    if matchkeys._family_first_script(f"{first} {last}") or first.casefold() in matchkeys.TITLES:
        return
    values: dict = {}
    dropped = matchkeys.split_full_name(values, [f"{first} {last}"], country)
    if values:  # only a Vietnamese name in its own letters is ordered
        assert country == "vn" and values == {"ln": [first], "fn": [last]}
    else:
        assert dropped == [{"key": key, "reason": "uncertain_name_order"} for key in ("fn", "ln")]
