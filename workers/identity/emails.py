"""An email answer read as exactly one address: email-validator's grammar (RFC 5322 and
6531), quoted local parts kept, each part in one script; the domain's check is cached."""

from __future__ import annotations

import functools
import re
import unicodedata
from email.utils import getaddresses

from email_validator import EmailNotValidError, validate_email
from email_validator.syntax import split_email, validate_email_local_part

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
    found = [value.strip()]
    if "<" in value or (value.count("@") > 1 and _LIST.search(value)):
        found = [address for _, address in getaddresses([_LIST.sub(",", value)]) if address]
    if len(found) != 1:
        raise NotAnEmail("not_one_email" if found else "not_an_email")
    try:
        _, local, unescaped, quoted, domain = split_email(found[0])
        validate_email_local_part(unescaped, allow_smtputf8=True, quoted_local_part=quoted)
    except EmailNotValidError:
        raise NotAnEmail("not_an_email") from None
    text = f"{local}@{domain}"
    if not _domain_valid(domain) or len(local.encode()) > 64 or len(text.encode()) > 254:  # RFC 5321's limits
        raise NotAnEmail("not_an_email")
    if not text.isascii() and any(_scripts(part) > 1 for part in re.split(r"[@.]", text)):
        raise NotAnEmail("mixed_scripts")
    return text


@functools.lru_cache(maxsize=8192)  # a handful of domains carry most addresses (gmail.com)
def _domain_valid(domain: str) -> bool:
    try:
        validate_email(f"x@{domain}", check_deliverability=False)
    except EmailNotValidError:
        return False
    return True


def _scripts(text: str) -> int:
    """How many scripts the letters of one part of an address are written in."""
    if text.isascii():
        return 1
    names = (unicodedata.name(ch, "?").split()[0] for ch in text if ch.isalpha())
    return len({_SCRIPT_GROUP.get(name, name) for name in names})
