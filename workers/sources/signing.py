"""HMAC checks shared by every source: constant-time, against each configured secret."""

from __future__ import annotations

import hashlib
import hmac
from typing import Iterable

from workers.common.refusals import BadSignature


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


def check_header(headers, header: str, candidates: Iterable[str], tool: str) -> None:
    """The signature header must be present and equal one of the candidate values.

    Raises:
        BadSignature: `missing_signature` or `bad_signature`.
    """
    given = headers.get(header)
    if not given:
        raise BadSignature(f"{header} header is required", reason="missing_signature")
    if not matches_any(candidates, given.strip()):
        raise BadSignature(f"signature does not match the body for any configured {tool} secret")
