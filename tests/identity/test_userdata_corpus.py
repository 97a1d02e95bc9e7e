"""The match-key corpus (tests/fixtures/userdata/*.tsv): every case through `hash_value`,
and whole leads through `build`, each case named by its file, line and rule."""

from __future__ import annotations

import hashlib
import re

import pytest

from helpers import FIXTURES
from workers.identity.matchkeys import HASHED as HASHED_KEYS
from workers.identity.userdata import Unusable, build, hash_value

CORPUS = FIXTURES / "userdata"
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\n|\\t")
HEX = re.compile(r"[0-9a-f]{64}|[0-9a-f]{32}")


def _decode(text: str) -> str:
    return _ESCAPE.sub(
        lambda m: chr(int(m.group(1), 16)) if m.group(1) else {"\\n": "\n", "\\t": "\t"}[m.group(0)], text
    )


def load_corpus() -> list:
    cases = []
    for path in sorted(CORPUS.glob("*.tsv")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            raw, expected, context, rule = (line.split("\t") + ["", ""])[:4]
            settings = dict(part.split("=", 1) for part in context.split(";") if part)
            cases.append(pytest.param(path.stem, _decode(raw), expected, settings, id=f"{path.stem}:{number}:{rule}"))
    return cases


CASES = load_corpus()


def test_the_corpus_is_wide():
    keys = {case.values[0] for case in CASES}
    assert keys == set(HASHED_KEYS)
    assert len(CASES) >= 400


@pytest.mark.parametrize("key, raw, expected, context", CASES)
def test_corpus_case(key, raw, expected, context):
    kwargs = {
        "region": context.get("region", "US"),
        "country": context.get("country"),
        "form_region": context.get("form_region"),
    }
    if expected.startswith("!"):
        with pytest.raises(Unusable) as err:
            hash_value(key, raw, **kwargs)
        assert err.value.reason == expected[1:]
    elif HEX.fullmatch(expected):
        assert hash_value(key, raw, **kwargs) == expected
    else:
        assert hash_value(key, raw, **kwargs) == hashlib.sha256(expected.encode("utf-8")).hexdigest()


def _h(text: str) -> list[str]:
    return [hashlib.sha256(text.encode("utf-8")).hexdigest()]


# Whole leads as forms deliver them: the lead's country steers its phone, state and zip.
LEADS = [
    (
        {
            "em": "Anna.Müller@Web.DE",
            "ph": "01512 3456789",
            "fn": "Anna",
            "ln": "Müller",
            "ct": "München",
            "st": "Bayern",
            "zp": "80331",
            "country": "Deutschland",
            "ge": "weiblich",
            "db": "16.02.1997",
        },
        {
            "em": _h("anna.müller@web.de"),
            "ph": _h("4915123456789"),
            "fn": _h("anna"),
            "ln": _h("müller"),
            "ct": _h("münchen"),
            "st": _h("bayern"),
            "zp": _h("80331"),
            "country": _h("de"),
            "ge": _h("f"),
            "db": _h("19970216"),
        },
    ),
    (
        {"em": "jean@orange.fr", "ph": "06 12 34 56 78", "fn": "Jean-Luc", "country": "France", "ge": "Homme"},
        {"em": _h("jean@orange.fr"), "ph": _h("33612345678"), "fn": _h("jeanluc"), "country": _h("fr"), "ge": _h("m")},
    ),
    (
        {"ph": "(11) 96123-4567", "fn": "João", "country": "Brasil", "ge": "Mulher", "zp": "01310-100"},
        {"ph": _h("5511961234567"), "fn": _h("joão"), "country": _h("br"), "ge": _h("f"), "zp": _h("01310100")},
    ),
    (
        {"em": "joe@example.com", "ph": "(650) 555-1212", "st": "Calif.", "zp": "94035-1234", "country": "U.S.A."},
        {"em": _h("joe@example.com"), "ph": _h("16505551212"), "st": _h("ca"), "zp": _h("94035"), "country": _h("us")},
    ),
    (
        {"fn": "Νίκος", "ln": "ΠΑΠΑΔΌΠΟΥΛΟΣ", "country": "Ελλάδα", "ph": "+30 691 234 5678"},
        {"fn": _h("νίκος"), "ln": _h("παπαδόπουλος"), "country": _h("gr"), "ph": _h("306912345678")},
    ),
]


@pytest.mark.parametrize("fields, expected", LEADS, ids=[f"lead{i}" for i in range(len(LEADS))])
def test_whole_leads_through_build(fields, expected):
    user_data, dropped = build(fields, region="US")
    assert dropped == []
    assert user_data == expected


def test_a_french_mobile_under_the_us_default_is_dropped_with_a_reason_not_mangled():
    user_data, dropped = build({"em": "a@b.fr", "ph": "06 12 34 56 78"}, region="US")
    assert "ph" not in user_data
    assert dropped == [{"key": "ph", "reason": "no_region_for_national"}]


def test_the_forms_region_comes_after_the_leads_country():
    user_data, _ = build({"ph": "0412 345 678", "country": "Australia"}, region="US", form_region="GB")
    assert user_data["ph"] == _h("61412345678")
