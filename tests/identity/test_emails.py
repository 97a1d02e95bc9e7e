"""The common-case path of `emails.address` reads every address as email-validator's own walk
does: same address, or the same refusal."""

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.identity import emails

ASCII_PIECES = st.sampled_from(
    [
        "ana",
        "Ana.Lopez",
        "a+b",
        "x",
        ".",
        "..",
        "@",
        "@@",
        "gmail.com",
        "example",
        "-",
        "_",
        "'",
        '"',
        "<",
        ">",
        " ",
        ",",
        ";",
        "\\",
        "(",
        ")",
        "[1.2.3.4]",
        "com",
        "a" * 70,
        "!#$%&*/=?^`{|}~",
        "1",
        "localhost",
        "",
    ]
)


def _outcome(read, text: str) -> str:
    try:
        return "ok:" + read(text)
    except emails.NotAnEmail as err:
        return "no:" + err.reason


OTHER_PIECES = st.sampled_from(
    ["José", "山田", "ü", "u\u0308", "\u0338", "оlga", "Ωμέγα", "＠", "\u200b", "ß", "δ.", "太郎"]
)


@settings(max_examples=800, deadline=None)
@given(
    st.lists(ASCII_PIECES | OTHER_PIECES, max_size=8).map("".join)
    | st.text(st.characters(max_codepoint=127), max_size=40)
    | st.text(max_size=30)
)
def test_the_short_path_reads_as_email_validators_walk(text):
    assert _outcome(emails.address, text) == _outcome(lambda t: emails._read(t.strip()), text)


def test_the_short_path_is_taken_for_a_plain_address_and_left_for_the_rest():
    assert emails.address(" Ana.Lopez+ads@Example.com ") == "Ana.Lopez+ads@Example.com"
    assert emails.address("Ana <ana@example.com>") == "ana@example.com"
    assert _outcome(emails.address, '"a b"@example.com') == 'ok:"a b"@example.com'
    assert _outcome(emails.address, "a@x.com; b@y.com") == "no:not_one_email"
    assert emails.address("jürgen.müller@example.com") == "jürgen.müller@example.com"
    assert _outcome(emails.address, "оlga@gmail.com") == "no:mixed_scripts"


def test_the_at_sign_composes_with_nothing():
    """Why the short path may split at the @: split_email's walk passes over one that composes."""
    assert all(unicodedata.normalize("NFC", "@" + chr(c))[0] == "@" for c in range(0x300, 0x2000))


def test_the_latin_short_cut_answers_as_the_marks_do():
    """`_mixed_scripts` skips the marks when every letter is Latin: beside a Latin, a Greek and
    a Han letter, every character up to U+2000 gets the answer the marks give."""
    for code in range(0x20, 0x2000):
        for text in (f"a{chr(code)}@x.com", f"α{chr(code)}@x.com", f"{chr(code)}山@x.com", f"a@{chr(code)}b.com"):
            marks = text.translate(emails._SCRIPT_MARKS)
            assert emails._mixed_scripts(text) == any(len(set(part)) > 1 for part in marks.split(".")), text
