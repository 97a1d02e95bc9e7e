"""HMAC checks shared by every source: constant-time, against each configured secret."""

from __future__ import annotations

import hashlib
import hmac
from typing import Iterable


def hmac_hex(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def matches_any(expected: Iterable[str], given: str) -> bool:
    """True if `given` equals any expected digest.

    Every candidate is compared, in constant time, so timing says nothing about which
    secret (current or rotated-out) came close.
    """
    given_bytes = given.encode("utf-8")
    found = False
    for candidate in expected:
        found |= hmac.compare_digest(candidate.encode("utf-8"), given_bytes)
    return found
