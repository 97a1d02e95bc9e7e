"""Reading times: the one parser for every time a webhook, Graph, a CRM or a person gives."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

_UNIX_TEXT = re.compile(r"\d{9,11}(\.\d+)?")  # unix seconds as text, as sheets export them
_AGO = re.compile(r"(\d+)\s*([mhd])")
_UNITS = {"m": 60, "h": 3600, "d": 86400}
# What a time of a lead, a submission or a stage can be: from 2000 up to 2100. Anything
# else is a sender's bug (or a probe: 10^19 fits no datetime, and would fail later, in a
# worker), and is treated as no time at all.
EARLIEST, LATEST = 946684800, 4102444800


def unix_time(value) -> int | None:
    """Unix seconds from a unix number, unix seconds as text, or ISO 8601 in any of the
    forms senders use (`2026-11-20T09:00:00Z`, Graph's `+0000`, a date alone); a time
    without a zone is UTC. None for anything else, and for a time outside 2000-2100."""
    seconds = _seconds(value)
    return seconds if seconds is not None and EARLIEST <= seconds <= LATEST else None


def _seconds(value) -> int | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value) if value == value and abs(value) != float("inf") else None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if _UNIX_TEXT.fullmatch(text):
        return int(float(text))
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return int((moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp())


def since(text: str, now: float | None = None) -> float:
    """`30m`, `6h`, `2d` ago, or an ISO date/time (UTC unless it says otherwise).

    Raises:
        ValueError: neither form.
    """
    relative = _AGO.fullmatch(text.strip())
    if relative:
        return (time.time() if now is None else now) - int(relative.group(1)) * _UNITS[relative.group(2)]
    moment = unix_time(text) if not _UNIX_TEXT.fullmatch(text.strip()) else None
    if moment is None:
        raise ValueError(f"since must be like 30m, 6h, 2d or 2026-11-20T09:00, got {text!r}")
    return float(moment)
