"""Full names split by the lead's naming convention, only where one reading is left: titles,
honorifics and initials are never a name, particles stay with their surname."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workers.identity import names

NAMES = st.text(alphabet=st.characters(categories=("Ll",)), min_size=2, max_size=12).map(str.title)
COUNTRIES = st.sampled_from([None, "us", *sorted(names.CONVENTIONS)])


def _split(full: str, country: str | None = None) -> dict:
    values: dict = {}
    names.split_full_name(values, [full], country)
    return values


def _plain(word: str) -> bool:
    low = word.casefold()
    special = names.PARTICLES | names._NASAB | names._CONNECTORS | names._ONE_NAME_WITH_NEXT
    return not names.is_title(word) and low not in special


@given(title=st.sampled_from(sorted(names.TITLES)), first=NAMES, last=NAMES, dot=st.booleans())
def test_no_title_or_honorific_is_ever_a_first_name(title, first, last, dot):
    if not (_plain(first) and _plain(last)):
        return
    split = _split(f"{title.upper() if dot else title}{'.' if dot else ''} {first} {last}")
    assert split == {"fn": [first], "ln": [last]}


@given(
    words=st.lists(
        NAMES | st.sampled_from(["J.", "A.B.", "Dr.", "van", "de", "bin", "Al", "Abdul", "y", "Jr"]),
        min_size=1,
        max_size=6,
    ),
    country=COUNTRIES,
)
def test_what_is_sent_is_a_run_of_the_words_given_never_a_title_or_initial(words, country):
    """The grammar of a split: each part is a contiguous run of the name's own words, the
    two never overlap, and neither holds a title, an initial or a suffix."""
    given, family, _ = names.split(" ".join(words), country)
    runs = [part.split() for part in (given, family) if part]
    words = [w for w in words if not names._initial(w)]  # a middle initial goes from between names
    spans = []
    for run in runs:
        starts = [i for i in range(len(words)) if words[i : i + len(run)] == run]
        assert starts, f"{run} is not a run of {words}"
        spans.append(set(range(starts[0], starts[0] + len(run))))
        assert not names.is_title(run[0]) and not any(names._initial(w) for w in run)
        assert run[-1].casefold().strip(".") not in names.SUFFIXES
    if len(spans) == 2 and len(set(words)) == len(words):
        assert not spans[0] & spans[1]


@given(first=NAMES, middle=NAMES, last=NAMES, country=st.sampled_from([None, "us", "gb", "de", "fr", "pt", "br", "ke"]))
def test_three_words_in_a_given_first_country_send_neither_name(first, middle, last, country):
    """`John Michael Smith` or `João Pedro Sousa`: a middle name or a second surname, nothing decides."""
    if not all(_plain(w) for w in (first, middle, last)):
        return
    assert _split(f"{first} {middle} {last}", country) == {}


@given(first=NAMES, last=NAMES, country=st.sampled_from(["jp", "cn", "kr", "hu", "sg", "my"]))
def test_latin_names_where_either_order_is_written_send_neither(first, last, country):
    values: dict = {}
    dropped = names.split_full_name(values, [f"{first} {last}"], country)
    assert values == {} and {d["key"] for d in dropped} == {"fn", "ln"}


# Sources for each convention: docs/decisions/names.md.
@pytest.mark.parametrize(
    "full, country, expected",
    [
        ("Emily Johnson", "us", ("Emily", "Johnson")),
        ("Jan van der Berg", "nl", ("Jan", "van der Berg")),  # particles belong to the surname
        ("Dr. Ursula von der Heide", "de", ("Ursula", "von der Heide")),
        ("Jean-Pierre de La Fontaine", "fr", ("Jean-Pierre", "de La Fontaine")),
        ("Pieter van der Merwe", "za", ("Pieter", "van der Merwe")),
        ("Ana dos Santos", "br", ("Ana", "dos Santos")),
        ("María José García López", "es", ("María José", "García López")),  # two given, two surnames
        ("María del Carmen Ruiz Soto", "mx", ("María del Carmen", "Ruiz Soto")),
        ("Juan Carlos Ruiz", "es", (None, None)),  # compound given name or two surnames
        ("Paula dos Santos Ferreira", "br", (None, None)),
        ("Sigríður Anna Þórðardóttir", "is", (None, "Þórðardóttir")),  # the patronymic is certain
        ("Jón Jónsson", "is", ("Jón", "Jónsson")),
        ("Иванов Иван Иванович", "ru", ("Иван", "Иванов")),  # Фамилия Имя Отчество
        ("Иван Иванович Иванов", "ru", ("Иван", "Иванов")),
        ("Иван Иванов", "ru", (None, None)),  # both orders are written
        ("Abdul Rahman Al Sabah", "kw", ("Abdul Rahman", "Al Sabah")),  # Abdul never stands alone
        ("Abdul Rahman Al-Farsi", "sa", ("Abdul Rahman", "Al-Farsi")),
        ("Mohamed Abdel Aziz", "eg", ("Mohamed", "Abdel Aziz")),
        ("Khalid bin Hamad Al Marri", "qa", ("Khalid", None)),  # a nasab chain: no certain surname
        ("Ahmad bin Ismail", "my", ("Ahmad", None)),
        ("Alhaji Musa Ibrahim", "ng", ("Musa", "Ibrahim")),  # an honorific, not a name
        ("Chief Olusegun Obasanjo", "ng", ("Olusegun", "Obasanjo")),
        ("Abebe Bikila Demissie", "et", ("Abebe", None)),  # given, father's, grandfather's
        ("R. Karthik", "in", (None, None)),  # a Tamil initial is the father's name
        ("J. Smith", "us", (None, "Smith")),
        ("John F. Kennedy", "us", ("John", "Kennedy")),
        ("TANAKA Hiroshi", "jp", ("Hiroshi", "TANAKA")),  # the family name in capitals
        ("CHAN Tai Man", "hk", ("Tai Man", "CHAN")),
        ("Jean DUPONT", "fr", ("Jean", "DUPONT")),
        ("Tanaka Hiroshi", "jp", (None, None)),
        ("Kim Min-jun", "kr", (None, None)),
        ("Nguyễn Thị Mai", "vn", ("Mai", "Nguyễn")),  # family, middle, given
        ("Nguyen Thi Mai", "vn", (None, None)),
        ("Kovács Péter", "hu", (None, None)),
        ("Kovács, Péter", "hu", ("Péter", "Kovács")),  # the comma decides
        ("Mensah, Kwame", None, ("Kwame", "Mensah")),
        ("Kwame Mensah, Jr.", None, ("Kwame", "Mensah")),
        ("Батболдын Энхбаяр", "mn", ("Энхбаяр", None)),  # the father's name in the genitive: no surname
        ("Aung San Suu Kyi", "mm", (None, None)),  # no surnames in Myanmar
        ("Suharti", "id", ("Suharti", None)),  # one name
        ("山田 太郎", None, ("太郎", "山田")),  # Han, Hangul, kana: family first
        ("김 민준", "kr", ("민준", "김")),
        ("王小明", "cn", (None, None)),  # one word: where the family name ends is not certain
    ],
)
def test_each_convention_splits_where_one_reading_is_left(full, country, expected):
    assert names.split(full, country)[:2] == expected


def test_a_given_first_name_field_is_not_split():
    values = {"fn": ["Mary Ann"]}
    assert names.split_full_name(values, ["Mary Ann Van Dyke"], "us") == [] and values == {"fn": ["Mary Ann"]}
