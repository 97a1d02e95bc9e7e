"""Normalisation and hashing: Meta's own examples byte for byte, and properties."""

import hashlib
import re
import string
import unicodedata
from collections import Counter
from datetime import date

import pycountry
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from workers.identity import genders, places
from workers.identity.genders import UNMARKED, WRITTEN
from workers.identity.matchkeys import HASHED as HASHED_KEYS
from workers.identity.userdata import Unusable, build, hash_value, normalise


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# Meta's own examples, from its customer information parameters doc.
META_EXAMPLES = [
    ("em", "John_Smith@gmail.com", "62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f"),
    ("ph", "(650)555-1212", "e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176"),
    ("fn", "Mary", "6915771be1c5aa0c886870b6951b03d7eafc121fea0e80a5ea83beb7c449f4ec"),
    ("fn", "Valéry", "08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c"),
    ("db", "2/16/1997", "01acdbf6ec7b4f478a225f1a246e5d6767eeab1a7ffa17f025265b5b94f40f0c"),
    ("country", "United States", "79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621"),
]


@pytest.mark.parametrize("key, raw, expected", META_EXAMPLES)
def test_meta_hash_examples(key, raw, expected):
    assert hash_value(key, raw, region="US") == expected


@pytest.mark.parametrize(
    "key, raw, expected",
    [
        ("em", "  Joe@Example.COM ", "joe@example.com"),
        ("ph", "+44 7911 123456", "447911123456"),
        ("ph", "0044 7911 123456", "447911123456"),
        ("ph", "447911123456", "447911123456"),  # country code without + (CRM style)
        ("ph", "(650) 555-1212", "16505551212"),
        ("fn", "Valéry", "valéry"),
        ("fn", "Vale\u0301ry", "valéry"),  # decomposed é hashes like the composed one
        ("ln", "O'Brien-Smith", "obriensmith"),
        ("ct", "New York", "newyork"),
        ("ct", "St. Louis", "stlouis"),
        ("st", "California", "ca"),
        ("st", "CA", "ca"),
        ("zp", "94035-1234", "94035"),
        ("zp", "940351234", "94035"),
        ("country", "us", "us"),
        ("country", "USA", "us"),
        ("country", "Germany", "de"),
        ("country", "UK", "gb"),
        ("db", "April 19, 1987", "19870419"),
        ("db", "1987-04-19", "19870419"),
        ("db", "19870419", "19870419"),
        ("db", "16/02/1997", "19970216"),
        ("ge", "Female", "f"),
        ("ge", "M", "m"),
        ("external_id", " crm-42 ", "crm-42"),
    ],
)
def test_normalise(key, raw, expected):
    assert normalise(key, raw, region="US") == expected


def test_phone_without_country_code_uses_the_default_region():
    assert normalise("ph", "07911 123456", region="GB") == "447911123456"
    assert normalise("ph", "030 1234567", region="DE") == "49301234567"


def test_state_and_zip_outside_the_us_keep_their_text():
    assert normalise("st", "Bavaria", country="de") == "bavaria"
    assert normalise("zp", "M1 1AE", country="gb") == "m11ae"
    assert normalise("zp", "12345", country="de") == "12345"


@pytest.mark.parametrize(
    "key, raw, reason",
    [
        ("em", "not-an-email", "not_an_email"),
        ("ph", "12", "invalid_phone"),
        ("ph", "call me", "unparseable_phone"),
        ("country", "Atlantis", "unknown_country"),
        ("db", "sometime", "unknown_date_format"),
        ("db", "1/1/1800", "implausible_birth_date"),
        ("ge", "x", "unknown_gender"),
        ("fn", "   ", "empty"),
        ("fn", "!!!", "empty_after_normalising"),
    ],
)
def test_unusable_values_raise_with_reason(key, raw, reason):
    with pytest.raises(Unusable) as err:
        normalise(key, raw)
    assert err.value.reason == reason


def test_build_drops_unusable_values_with_reasons_and_no_values():
    user_data, dropped = build({"em": ["joe@example.com", "nope"], "ph": "12", "fn": ["", "Joe"]})
    assert user_data == {
        "em": [hashlib.sha256(b"joe@example.com").hexdigest()],
        "fn": [hashlib.sha256(b"joe").hexdigest()],
    }
    assert dropped == [
        {"key": "em", "reason": "not_an_email"},
        {"key": "ph", "reason": "invalid_phone"},
        {"key": "fn", "reason": "empty"},
    ]


def test_build_applies_us_rules_only_for_us_leads():
    us, _ = build({"zp": "94035-1234", "country": "United States"})
    de, _ = build({"zp": "D-94035", "country": "Germany"})
    assert us["zp"] == [hashlib.sha256(b"94035").hexdigest()]
    assert de["zp"] == [hashlib.sha256(b"94035").hexdigest()]


def test_build_collapses_values_that_normalise_alike():
    user_data, _ = build({"em": ["Joe@Example.com", "joe@example.com "]})
    assert len(user_data["em"]) == 1


# -- properties -------------------------------------------------------------------
TEXT_KEYS = ["em", "fn", "ln", "ct", "st", "zp", "country", "db", "ge", "external_id"]
HEX64 = re.compile(r"[0-9a-f]{64}")


@given(st.sampled_from(TEXT_KEYS), st.text(max_size=40))
def test_normalise_is_idempotent(key, raw):
    try:
        once = normalise(key, raw)
    except Unusable:
        return
    assert normalise(key, once) == once


@given(st.from_regex(r"\+?[0-9 ()\-]{4,20}", fullmatch=True), st.sampled_from(["US", "GB", "DE", "IN", "BR"]))
def test_phone_normalisation_is_stable_and_digits_only(raw, region):
    try:
        digits = normalise("ph", raw, region=region)
    except Unusable:
        return
    assert digits.isdigit() and not digits.startswith("0")
    assert normalise("ph", "+" + digits, region=region) == digits


@given(st.sampled_from(HASHED_KEYS), st.text(max_size=40))
def test_no_empty_value_is_ever_hashed(key, raw):
    try:
        hashed = hash_value(key, raw)
    except Unusable:
        return
    assert hashed != hashlib.sha256(b"").hexdigest()
    assert HEX64.fullmatch(hashed)


@given(st.sampled_from(HASHED_KEYS), st.from_regex(r"[0-9a-fA-F]{64}", fullmatch=True))
def test_already_hashed_values_pass_through_lowercased(key, hashed):
    assert hash_value(key, hashed) == hashed.lower()


@given(st.dictionaries(st.sampled_from(HASHED_KEYS), st.lists(st.text(max_size=20), max_size=3)))
def test_build_never_emits_empty_lists_or_raw_values(fields):
    user_data, dropped = build(fields)
    for key, hashes in user_data.items():
        assert hashes and all(HEX64.fullmatch(h) for h in hashes)
    for item in dropped:
        assert set(item) == {"key", "reason"}


NAME_KEYS = ["fn", "ln", "ct"]


@given(st.sampled_from(NAME_KEYS), st.text(max_size=30))
def test_lowercasing_never_changes_a_characters_identity_beyond_case(key, raw):
    """No ß → ss, no final ς → σ: the output is the lowercased input (its compatibility
    forms folded, NFKC) with characters removed, never replaced; a name's words are
    joined by one space whatever separated them."""
    try:
        out = normalise(key, raw)
    except Unusable:
        return
    folded = unicodedata.normalize("NFKC", raw.strip()).replace("İ", "i")
    # Decomposed and counted: a kept mark may compose with, or reorder beside, its letter.
    given = Counter(unicodedata.normalize("NFD", folded.lower()))
    assert not Counter(unicodedata.normalize("NFD", out.replace(" ", ""))) - given


@given(st.text(max_size=12))
def test_gender_comes_from_the_word_table(raw):
    try:
        code = normalise("ge", raw)
    except Unusable:
        return
    assert code in (WRITTEN.get(genders._written(raw)), UNMARKED.get(genders._unmarked(raw)))


@given(st.sampled_from("fmFM"), st.text(alphabet=string.ascii_letters, min_size=1, max_size=10))
def test_gender_is_never_guessed_from_a_first_letter(first, rest):
    word = first + rest
    assume(genders._unmarked(word) not in UNMARKED)
    with pytest.raises(Unusable, match="unknown_gender"):
        normalise("ge", word)


@given(
    st.dates(min_value=date(1900, 1, 1), max_value=date.today()),
    st.sampled_from(
        [
            "{y}-{m:02d}-{d:02d}",
            "{y}/{m}/{d}",
            "{y}.{m:02d}.{d:02d}",
            "{y}{m:02d}{d:02d}",
            "{name} {d}, {y}",
            "{d} {abbr} {y}",
            "{d}-{abbr}-{y}",
            "{d}th of {name} {y}",
            "{y}-{m:02d}-{d:02d}T10:00:00",  # no zone: as written (a UTC instant: tests/fixtures/userdata/db.tsv)
        ]
    ),
)
def test_any_unambiguous_date_shape_reads_back_the_same_day(day, shape):
    text = shape.format(y=day.year, m=day.month, d=day.day, name=day.strftime("%B"), abbr=day.strftime("%b"))
    assert normalise("db", text) == day.strftime("%Y%m%d")


@given(st.dates(min_value=date(1900, 1, 13), max_value=date.today()).filter(lambda d: d.day > 12))
def test_day_first_and_month_first_are_told_apart_by_a_day_above_12(day):
    expected = day.strftime("%Y%m%d")
    assert normalise("db", f"{day.day}/{day.month}/{day.year}") == expected
    assert normalise("db", f"{day.month}/{day.day}/{day.year}") == expected
    assert normalise("db", f"{day.day}.{day.month}.{day.year}") == expected


@pytest.mark.parametrize("entry", list(pycountry.countries), ids=lambda c: c.alpha_2)
def test_every_country_is_found_by_code_and_name(entry):
    for text in (entry.alpha_2, entry.alpha_3, entry.name, getattr(entry, "common_name", entry.name)):
        if places.squash(text) not in places.SHARED_NAMES:
            assert normalise("country", text) == entry.alpha_2.lower()


@pytest.mark.parametrize("text", ["Congo", "CONGO", " congo "])
def test_a_name_two_countries_share_is_no_country(text):
    with pytest.raises(Unusable, match="unknown_country"):
        normalise("country", text)


@pytest.mark.parametrize(
    "hashed", [hashlib.sha256(b"").hexdigest(), hashlib.sha256(b"").hexdigest().upper(), hashlib.md5(b"").hexdigest()]
)
def test_a_hash_of_nothing_is_treated_as_empty(hashed):
    with pytest.raises(Unusable) as err:
        hash_value("em", hashed)
    assert err.value.reason == "empty"
    assert build({"em": hashed, "ph": hashed}) == (
        {},
        [{"key": "em", "reason": "empty"}, {"key": "ph", "reason": "empty"}],
    )


def test_a_country_no_table_knows_gets_no_us_rules():
    """Its postcode is not cut to five digits, its state is its letters."""
    user_data, dropped = build({"country": "Wakanda", "zp": "12345-6789", "st": "Birnin Zana"})
    assert user_data["zp"] == [sha256("123456789")] and user_data["st"] == [sha256("birninzana")]
    assert dropped == [{"key": "country", "reason": "unknown_country"}]


@pytest.mark.parametrize(
    "full, first, last",
    [
        ("Dr. Ana García", "ana", "garcía"),  # a leading title is not a first name
        ("Frau Erika Mustermann", "erika", "mustermann"),
        ("Sra. María López", "maría", "lópez"),
        ("山田\u3000太郎", "太郎", "山田"),  # an ideographic space separates too; Japanese: family name first
        ("Jean\u00a0Dupont", "jean", "dupont"),  # a no-break space
        ("Pani Anna Nowak", "anna", "nowak"),
        ("Bapak Budi Santoso", "budi", "santoso"),
        ("श्रीमती सीता देवी", "सीता", "देवी"),
        ("นาย สมชาย ใจดี", "สมชาย", "ใจดี"),
        ("السيد أحمد علي", "أحمد", "علي"),
        ("Don Draper", "don", "draper"),  # also a given name: kept
    ],
)
def test_full_names_split_on_any_space_without_their_title(full, first, last):
    from workers.identity.matchkeys import from_lead_ads

    user_data, _ = build(from_lead_ads([{"name": "full_name", "values": [full]}]))
    assert user_data["fn"] == [sha256(first)]
    assert user_data.get("ln") == ([sha256(last)] if last else None)


def test_the_leads_country_orders_its_full_name_and_an_uncertain_order_is_counted():
    """A Lead Ads lead's full name is split where its country is known (its answer, or its
    international phone): Vietnam writes the family name first; Hungary either way."""
    from workers.identity.matchkeys import from_lead_ads

    def lead(full, **more):
        fields = [{"name": "full_name", "values": [full]}]
        return build(from_lead_ads(fields + [{"name": k, "values": [v]} for k, v in more.items()]))

    user_data, dropped = lead("Nguyễn Văn An", country="VN")
    assert user_data["ln"] == [sha256("nguyễn")] and user_data["fn"] == [sha256("an")]  # family, middle, given
    user_data, dropped = lead("Kovács Péter", phone_number="+36 20 123 4567")
    assert "fn" not in user_data and "ln" not in user_data
    assert {"key": "fn", "reason": "uncertain_name_order"} in dropped


def test_a_lead_with_no_country_but_an_international_phone_is_placed_by_it():
    """+62 with `Jawa Timur`: Indonesia's rules, not the default region's (a US state table
    would drop it); +233 with `04/07/1992`: Ghana writes the day first."""
    from workers.identity import userdata

    hashed, dropped = userdata.build({"st": ["Jawa Timur"], "ph": ["+62 812 3456 7890"]}, "US")
    assert hashed["st"] == [userdata.sha256("jawatimur")] and dropped == []
    hashed, _ = userdata.build({"db": ["04/07/1992"], "ph": ["+233 24 123 4567"]}, "US")
    assert hashed["db"] == [userdata.sha256("19920704")]
    _, dropped = userdata.build({"db": ["04/07/1992"], "ph": ["024 123 4567"]}, "US")
    assert sorted(d["reason"] for d in dropped) == ["ambiguous_date", "no_region_for_national"]


def test_every_format_character_is_folded_away():
    from workers.identity import letters

    everywhere = {c for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"}
    assert set(letters.FORMAT_CHARACTERS) == everywhere
    # folded() skips its search when the text is printable: that is safe only while none is
    assert not any(chr(c).isprintable() for c in everywhere)
