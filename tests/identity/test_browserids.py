"""Hidden browser fields: placeholders dropped, Meta's shapes required, the client's IP."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workers.identity import browserids

MS = 1731575555123


@pytest.mark.parametrize(
    "value",
    [
        "",
        "  ",
        "undefined",
        "null",
        "NULL",
        "None",
        "(not set)",
        "{{fbclid}}",
        "{fbclid}",
        "%FBCLID%",
        "${fbclid}",
        "[object Object]",
        None,
        12,
        ["x"],
    ],
)
def test_placeholders_and_non_text_are_absent(value):
    assert browserids.present(value) is None


@pytest.mark.parametrize(
    "fbc, fbclid, expected",
    [
        (f"fb.1.{MS}.IwAR2xYzAbC", None, f"fb.1.{MS}.IwAR2xYzAbC"),  # a ready cookie wins
        (f"fb.1.{MS}.IwAR2xYzAbC", "Other", f"fb.1.{MS}.IwAR2xYzAbC"),
        (f"fb.1.{MS}.undefined", "IwAR2xYzAbC", "fb.1.1700000000000.IwAR2xYzAbC"),  # placeholder: built instead
        ("fb.1..IwAR", "IwAR2xYzAbC", "fb.1.1700000000000.IwAR2xYzAbC"),  # not Meta's shape
        ("undefined", "{{fbclid}}", None),
        (None, "IwAR2xYzAbC", "fb.1.1700000000000.IwAR2xYzAbC"),  # case kept, never hashed
        (None, "Iw AR", None),  # not a click id
    ],
)
def test_fbc(fbc, fbclid, expected):
    assert browserids.fbc(fbc, fbclid, seen_at=1700000000) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        (f"fb.1.{MS}.1098115397", f"fb.1.{MS}.1098115397"),
        (f"fb.2.{MS}.1098115397", f"fb.2.{MS}.1098115397"),
        ("undefined", None),
        ("fb.1.undefined.123", None),
        ("1098115397", None),
        (f"fb.1.{MS}.", None),
    ],
)
def test_fbp_must_be_a_real_cookie(value, expected):
    assert browserids.fbp(value) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        ("203.0.113.7", "203.0.113.7"),
        ("203.0.113.7, 10.0.0.1", "203.0.113.7"),
        ("10.0.0.1, 203.0.113.7", "203.0.113.7"),  # a private first hop is not the visitor
        ("203.0.113.7:51234", "203.0.113.7"),
        ("[2001:db8::1]:443", "2001:db8::1"),
        ("2001:DB8::1", "2001:db8::1"),
        ("unknown", None),
        ("127.0.0.1", None),
        ("192.168.1.4", None),
        ("::1", None),
        ("999.1.1.1", None),
        ("unknown, 198.51.100.2", "198.51.100.2"),
        ("::ffff:10.0.0.1", None),
    ],
)
def test_client_ip(value, expected):
    assert browserids.client_ip(value) == expected


@given(st.text(max_size=40))
def test_whatever_arrives_the_fields_are_meta_shaped_or_absent(text):
    fbc = browserids.fbc(text, text, seen_at=1700000000)
    assert fbc is None or fbc.startswith("fb.") and "undefined" not in fbc
    assert browserids.fbp(text) in (None, text.strip())
    ip = browserids.client_ip(text)
    assert ip is None or ip in text.lower() or ":" in ip
