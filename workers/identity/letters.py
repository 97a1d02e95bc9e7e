"""Text folded (NFKC, no format characters) and lowercased in the lead's language; a name
read as words, titles and initials left out.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import re
import unicodedata

from workers.identity import names

_NOT_ASCII_LETTER = re.compile(r"[^a-z]+")
_NOT_ASCII_LETTER_OR_DIGIT = re.compile(r"[^a-z0-9]+")


class Unusable(ValueError):
    """A raw value that cannot be normalised; `reason` is machine-readable."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def lower(value: str) -> str:
    """NFC, then str.lower (which keeps ß and writes a final sigma as ς), then NFC again."""
    if value.isascii():
        return value.strip().lower()  # NFC changes no ASCII text: the common case, cheaply
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", value.strip()).lower())


def folded(value: str) -> str:
    """NFKC (full-width and other compatibility forms to their plain letters and digits),
    and the invisible format characters gone (a byte-order mark, zero-width spaces)."""
    if not unicodedata.is_normalized("NFKC", value):
        value = unicodedata.normalize("NFKC", value)
    if value.isprintable():  # a format character is never printable: none here, the common case
        return value
    return _FORMAT_CHARACTER.sub("", value) if _FORMAT_CHARACTER.search(value) else value


def character_class(codes: list[int]) -> str:
    """Sorted code points as the inside of a regular expression's character class, in ranges."""
    return "".join(f"\\U{run[0]:08x}-\\U{run[-1]:08x}" for run in _runs(codes))


def _runs(codes: list[int]) -> list[list[int]]:
    """Sorted code points as runs of consecutive ones (a character class of ranges is fast)."""
    runs: list[list[int]] = []
    for code in codes:
        if runs and runs[-1][-1] == code - 1:
            runs[-1].append(code)
        else:
            runs.append([code])
    return runs


# Every format character (Unicode category Cf), to be deleted, as one character class.
# They live in the first two planes and the tags block (a test checks every plane).
FORMAT_CHARACTERS = [
    c for r in (range(0x20000), range(0xE0000, 0xE0080)) for c in r if unicodedata.category(chr(c)) == "Cf"
]
_FORMAT_CHARACTER = re.compile(f"[{character_class(FORMAT_CHARACTERS)}]")


# Where the lead's language lowercases I differently (Unicode's SpecialCasing): Turkish and
# Azerbaijani write I/ı and İ/i. Elsewhere İ is still i: `İ`.lower() would add a combining dot.
_DOTLESS_I = frozenset({"tr", "az"})


def cased(value: str, country: str | None) -> str:
    """`value` with I and İ as the language of `country` (alpha-2) lowercases them."""
    if (country or "").lower() in _DOTLESS_I:
        return value.replace("I", "ı").replace("İ", "i")
    return value.replace("İ", "i") if "İ" in value else value


def letters(value: str, country: str | None = None, keep_digits: bool = False) -> str:
    """Letters (and marks; digits if asked) lowercased in the lead's language: `fn`, `ln`,
    `ct` as they are, so the table below names this function itself (a call less per key)."""
    if "I" in value or "İ" in value:
        value = cased(value, country)
    if value.isalpha():  # letters only (no marks, spaces or digits): the common case, nothing to drop
        return value.lower() if value.isascii() else lower(value)
    if value.isascii():  # no strip needed: spaces go with everything else that is not a letter
        return (_NOT_ASCII_LETTER_OR_DIGIT if keep_digits else _NOT_ASCII_LETTER).sub("", value.lower())
    kept, previous = [], ""
    for ch in lower(value):
        kind = unicodedata.category(ch)[0]
        if kind == "L" or (kind == "N" and keep_digits) or (kind == "M" and previous in "LM" and previous):
            kept.append(ch)  # a mark only on a letter: `0̄` is no letter
            previous = kind
        else:
            previous = ""
    return unicodedata.normalize("NFC", "".join(kept))


def initials(value: str) -> bool:
    """`J.`, `J.W.`, `J W`: cased letters standing alone (a Han given name of one character
    is a name: its script has no case)."""
    words = [w for w in re.split(r"[\s.]+", value.strip()) if w]
    return 0 < len(words) <= 3 and all(len(w) == 1 and w.isalpha() and w != w.swapcase() for w in words)


_BRACKETED = re.compile(r"\([^)]*\)|\[[^\]]*\]")  # `Anna (Ann)`: a nickname beside the name


def name(value: str, country: str | None = None) -> str:
    """`fn`, `ln`: each word as `_letters` keeps it, one space between words (Meta's SDK
    keeps them: `mary ann`, `van der berg`). Titles, suffixes, initials and a bracketed
    nickname are no name."""
    if len(value) > 1 and value.isalpha():  # one word of letters: the common case, read at once
        if names.is_title(value):
            raise Unusable("title_only")
        return letters(value, country)
    words = names.without_titles(_BRACKETED.sub(" ", value).split())
    while len(words) > 1 and words[-1].casefold().strip(".") in names.SUFFIXES:
        words = words[:-1]
    if len(words) == 1 and names.is_title(words[0]):
        raise Unusable("title_only")
    pairs = [(word, letters(word, country)) for word in words]
    kept = [(word, out) for word, out in pairs if any(is_letter(ch) for ch in out)]
    full = [out for word, out in kept if not (initials(word) or initials(out))]  # `Mary J.`: the initial goes
    if not full:
        raise Unusable("initials" if kept else "empty_after_normalising")
    full = names.without_titles(full)  # `0DR AA`: a title once its digits are gone
    if len(full) == 1 and names.is_title(full[0]):
        raise Unusable("title_only")
    return " ".join(full)


def is_letter(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "L"
