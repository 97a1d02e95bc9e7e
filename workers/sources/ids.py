"""Ids as senders give them, checked once on arrival: what becomes a job id, a Redis key
and an event id must be short and plain, whatever a body carries."""

from __future__ import annotations

import re

_GRAPH_ID = re.compile(r"[0-9]{1,20}")  # Graph object ids: decimal digits (ASCII only: "²" and "٣" are digits too)
_TOOL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # Typeform and Tally ids, tokens and response ids


def graph_id(value) -> str | None:
    """A Graph id from a JSON number or string, as a digit string; None if it is not one
    (zero is none: Meta's ids start at 1, and "0" is what a sender puts for "no id")."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if 0 < value < 10**20 else None
    if isinstance(value, str) and _GRAPH_ID.fullmatch(value.strip()) and value.strip().strip("0"):
        return value.strip()
    return None


_DIGITS = re.compile(r"[0-9]{1,19}")  # ASCII only, and short: int() of 5,000 digits raises, of "²" too


def unsigned(value: str | None, most: int = 19) -> int | None:
    """A header's or field's whole number (a timestamp, a count), read strictly before any
    arithmetic: ASCII digits only, at most `most` of them; None for anything else."""
    text = (value or "").strip()
    if len(text) > most or not _DIGITS.fullmatch(text):
        return None
    return int(text)


def tool_id(value) -> str | None:
    """A form tool's id (form, response, token) as text; None if it is not plain."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str) and _TOOL_ID.fullmatch(value):
        return value
    return None


def plain(value) -> str | None:
    """A field's id, ref, label or type as text, or None: a list or an object there is a
    sender's bug, never a name to look answers up by."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def mapping(value) -> dict:
    """`value` when a vendor sent an object there, else an empty one: read on without a check."""
    return value if isinstance(value, dict) else {}
