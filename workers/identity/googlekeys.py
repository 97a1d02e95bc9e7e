"""Match keys as Google's Data Manager API takes them, which are not Meta's: an address read
by the same email grammar, lowercased, and for Gmail without its dots and its `+tag`; a
phone in E.164 with its `+`. Hashed SHA-256, hex (the request's `encoding: HEX`); a Meta
hash is never one of these (its phone has no `+`, its Gmail keeps its dots).

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import hashlib

from workers.identity import emails, phones

GMAIL = ("gmail.com", "googlemail.com")  # the domains whose dots and +tags Google drops


def email(value: str) -> str:
    """Google's form of the one address in `value`.

    Raises:
        emails.NotAnEmail: not one address (as Meta's key reads it), or a Gmail address
            with nothing before its dots and `+tag`.
    """
    # Google's formatting page: "remove leading, trailing and intermediate whitespace" (its
    # Python formatter refuses inner whitespace instead; the page is what Google matches by).
    # Two addresses stay two (`a@x.com, b@y.com`): the grammar refuses them.
    local, _, domain = emails.address("".join(value.split())).lower().rpartition("@")
    if domain in GMAIL:
        local = local.split("+", 1)[0].replace(".", "")
        if not local:
            raise emails.NotAnEmail("not_an_email")
    return f"{local}@{domain}"


def phone(value: str, regions: tuple[str, ...]) -> str:
    """E.164 with its `+`; a national number read in the first of `regions` it is valid in.

    Raises:
        phones.NotAPhone: no valid number in any reading.
    """
    return "+" + phones.e164_digits(value, regions)


def hashed(normalised: str) -> str:
    """SHA-256 of the UTF-8 bytes, hex."""
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()
