"""Every key we send matches its grammar, whatever the input: random text, and text built
from the pieces forms are made of (names, digits, separators, marks, other scripts)."""

import re
import unicodedata
from datetime import date

import phonenumbers
import pycountry
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.identity import names
from workers.identity.userdata import Unusable, normalise

PIECES = st.sampled_from(
    [
        "Ana",
        "MARÍA",
        "van",
        "de",
        "J.",
        "Dr.",
        "İ",
        "ß",
        "ΣΑΣ",
        "山田",
        "김",
        "@",
        ".",
        "-",
        " ",
        "  ",
        "\u200b",
        "\ufeff",
        "１２",
        "0",
        "44",
        "+",
        "(",
        ")",
        "ext",
        "x",
        "〒",
        "<",
        ">",
        ";",
        ",",
        "gmail.com",
        "ana",
        "Z",
        "T",
        ":",
        "/",
        "12",
        "1990",
        "V",
        "平成",
        "元年",
        "年",
        "月",
        "日",
        "Mujer",
        "M",
        "f",
        "\u0301",
        "ا",
        "ж",
        "١٢",
    ]
)
INPUT = st.one_of(st.text(max_size=30), st.lists(PIECES, max_size=8).map("".join))
COUNTRIES = st.sampled_from([None, "us", "de", "tr", "jp", "tw", "br", "pl", "mx", "et", "in", "gb", "pr"])
ALPHA_2 = {c.alpha_2.lower() for c in pycountry.countries}


def _words(text: str) -> bool:
    words = text.split(" ")
    return all(
        w and all(unicodedata.category(ch)[0] in "LM" for ch in w) and any(ch.isalpha() for ch in w) for w in words
    )


def _date(text: str) -> bool:
    if not re.fullmatch(r"\d{8}", text):
        return False
    try:
        day = date(int(text[:4]), int(text[4:6]), int(text[6:]))
    except ValueError:
        return False
    return date(1900, 1, 1) <= day <= date.today()


def _phone(text: str) -> bool:
    return re.fullmatch(r"[1-9]\d{6,14}", text) is not None and phonenumbers.is_valid_number(
        phonenumbers.parse("+" + text)
    )


GRAMMAR = {
    "fn": _words,
    "ln": _words,
    "ct": lambda t: _words(t) and " " not in t,
    "em": lambda t: t.count("@") >= 1 and t == t.lower() and not any(ch.isspace() for ch in t.replace('" "', "")),
    "ph": _phone,
    "zp": lambda t: t == t.lower() and t.isalnum(),
    "st": lambda t: t == t.lower() and all(unicodedata.category(ch)[0] in "LMN" for ch in t) and not t[0].isspace(),
    "country": lambda t: t in ALPHA_2,
    "db": _date,
    "ge": lambda t: t in ("f", "m"),
}


@settings(max_examples=300)
@given(key=st.sampled_from(sorted(GRAMMAR)), raw=INPUT, country=COUNTRIES)
def test_every_key_sent_matches_its_grammar(key, raw, country):
    try:
        out = normalise(key, raw, country=country)
    except Unusable:
        return
    assert GRAMMAR[key](out), (key, raw, country, out)


@given(raw=INPUT, country=st.sampled_from(["us", "pr"]))
def test_a_us_postcode_sent_is_five_digits(raw, country):
    try:
        out = normalise("zp", raw, country=country)
    except Unusable:
        return
    assert re.fullmatch(r"\d{5}", out), (raw, out)


@given(raw=INPUT)
def test_a_name_sent_is_never_a_title_or_a_lone_letter(raw):
    try:
        out = normalise("fn", raw)
    except Unusable:
        return
    words = out.split(" ")
    assert not any(len(w) == 1 and w != w.upper() for w in words), (raw, out)  # an initial
    assert not names.is_title(words[0]) or len(words) == 1 and not names.is_title(raw.strip()), (raw, out)
