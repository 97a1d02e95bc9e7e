"""An email answer read as exactly one address: email-validator's grammar (RFC 5322 and
6531), quoted local parts kept, each part in one script; the domain's check is cached."""

from __future__ import annotations

import functools
import re
import unicodedata
from email.utils import getaddresses

from email_validator import EmailNotValidError, validate_email
from email_validator.rfc_constants import DOT_ATOM_TEXT, DOT_ATOM_TEXT_INTL
from email_validator.syntax import split_email, validate_email_local_part

from workers.identity import letters

_LIST = re.compile(r"[,;]")  # what separates two addresses in one answer
_SCRIPT_GROUP = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "CJK"}  # Japanese and Korean mix Han in


class NotAnEmail(ValueError):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def address(value: str) -> str:
    """The one address in `value` as written (`Name <address>`: the address).

    Raises:
        NotAnEmail: `not_an_email`, `not_one_email` (two addresses), `mixed_scripts`
            (`оlga@gmail.com` with a Cyrillic `о`: a keyboard's slip, no one's address).
    """
    text = value.strip()
    if '"' in text or "<" in text or text.count("@") != 1:
        return _read(text)
    # The common case: one @ (which composes with nothing) and no quote or display name, so
    # split_email's walk would split there; its local part is checked by the library's own test.
    local, domain = text.split("@")
    if not (local and (DOT_ATOM_TEXT.match(local) or _letters_beyond_ascii(local))):
        try:
            validate_email_local_part(local, allow_smtputf8=True)
        except EmailNotValidError:
            raise NotAnEmail("not_an_email") from None
    return _checked(local, domain)


def _letters_beyond_ascii(local: str) -> bool:
    """An internationalised dot-atom whose characters beyond ASCII are all letters: the
    library's own test passes it (its unsafe-character check refuses no letter)."""
    return bool(DOT_ATOM_TEXT_INTL.match(local)) and local.translate(_ASCII_GONE).isalpha()


_ASCII_GONE = dict.fromkeys(range(128))


def _read(text: str) -> str:
    """`address` by email-validator's own walk: display names, quoted local parts, lists."""
    found = [text]
    if "<" in text or (text.count("@") > 1 and _LIST.search(text)):
        found = [address for _, address in getaddresses([_LIST.sub(",", text)]) if address]
    if len(found) != 1:
        raise NotAnEmail("not_one_email" if found else "not_an_email")
    try:
        _, local, unescaped, quoted, domain = split_email(found[0])
        validate_email_local_part(unescaped, allow_smtputf8=True, quoted_local_part=quoted)
    except EmailNotValidError:
        raise NotAnEmail("not_an_email") from None
    return _checked(local, domain)


def _checked(local: str, domain: str) -> str:
    """`local@domain` once the local part is read: the domain's check (cached), RFC 5321's
    lengths, one script per part."""
    text = f"{local}@{domain}"
    if not _domain_valid(domain) or len(local.encode()) > 64 or len(text.encode()) > 254:  # RFC 5321's limits
        raise NotAnEmail("not_an_email")
    if not text.isascii() and _mixed_scripts(text):
        raise NotAnEmail("mixed_scripts")
    return text


@functools.lru_cache(maxsize=8192)  # a handful of domains carry most addresses (gmail.com)
def _domain_valid(domain: str) -> bool:
    try:
        validate_email(f"x@{domain}", check_deliverability=False)
    except EmailNotValidError:
        return False
    return True


def _mixed_scripts(address: str) -> bool:
    """Whether the letters of one part of the address (between `@` and dots) are written in
    more than one script: each letter read as its script's mark in one pass, in C."""
    if not _BEYOND_LATIN.search(address):  # no letter but Latin ones: most addresses beyond ASCII
        return False
    marks = address.translate(_SCRIPT_MARKS)
    if len(set(marks)) <= 2:  # one script and the dots: the common case
        return False
    return any(len(set(part)) > 1 for part in marks.split("."))


class _ScriptMarks(dict):
    """Code point to one character standing for its letter's script (by the first word of its
    name), None for a non-letter: a table str.translate reads in C, filled as letters come."""

    def __missing__(self, code: int) -> str | None:
        ch = chr(code)
        if ch in "@.":  # where one part of the address ends: kept, `@` read as a dot
            self[code] = "."
            return "."
        name = unicodedata.name(ch, "?").split()[0] if ch.isalpha() else None
        mark = None if name is None else _MARK_OF.setdefault(_SCRIPT_GROUP.get(name, name), chr(0xE000 + len(_MARK_OF)))
        self[code] = mark
        return mark


_MARK_OF: dict[str, str] = {}
_SCRIPT_MARKS = _ScriptMarks()
# Latin letters, and what is no letter, where most addresses beyond ASCII are written (ASCII,
# Latin-1 to Latin Extended-B, Latin Extended Additional): anything else asks for the marks.
_LATIN = [
    code
    for code in (*range(0x250), *range(0x1E00, 0x1F00))
    if _SCRIPT_MARKS[code] in (None, ".", _SCRIPT_MARKS[ord("a")])
]
_BEYOND_LATIN = re.compile(f"[^{letters.character_class(_LATIN)}]")
