"""The one JSON reader for everything that arrives: every source's body and the stage API.

Notes: docs/internals/common.md
"""

from __future__ import annotations

import json
import re

from workers.common.refusals import MalformedBody

# How a lone surrogate gets into JSON text: escaped, or encoded as UTF-8 (ED A0..BF ..).
_SURROGATE_IN_UTF8 = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def load(body: bytes):
    """The parsed body; lone surrogates replaced with U+FFFD (valid pairs were joined by
    the decoder already).

    Raises:
        MalformedBody: `malformed_json` for anything that is not JSON, too deeply nested
            included.
    """
    try:
        doc = json.loads(body, parse_int=_int)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise MalformedBody("body is not valid JSON") from None
    # A body in UTF-16 or UTF-32 (JSON allows them) is rare: checked whole.
    suspect = _SURROGATE_IN_UTF8.search(body) or json.detect_encoding(body) != "utf-8"
    return without_surrogates(doc) if suspect else doc


def _int(text: str):
    """An integer, unless it is longer than any id or amount: Python refuses to read one
    of more than 4,300 digits, and that must not sink the other items of a batch. Kept as
    text, it fails the check of whatever field it is in, alone."""
    return int(text) if len(text) <= 40 else text


def without_surrogates(doc):
    """Every string (keys included) with its lone surrogates replaced; iterative, so a
    deep document cannot exhaust the stack here either."""

    def clean(value):
        return _LONE_SURROGATE.sub(REPLACEMENT, value) if isinstance(value, str) else value

    root = [clean(doc)]
    stack = [root]
    while stack:
        container = stack.pop()
        if isinstance(container, list):
            for i, value in enumerate(container):
                container[i] = clean(value)
                if isinstance(container[i], (list, dict)):
                    stack.append(container[i])
        else:
            for key in list(container):
                value = clean(container.pop(key))
                container[clean(key)] = value
                if isinstance(value, (list, dict)):
                    stack.append(value)
    return root[0]
