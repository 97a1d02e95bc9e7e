"""An authenticated delivery we cannot use: acknowledged 2xx, recorded with its reason and
its body's shape (never a value). Why: docs/decisions/authenticated-never-refused.md."""

from __future__ import annotations

import json

UNUSABLE_REASONS = ("malformed_json", "unexpected_shape", "bad_id", "too_many_events")  # MalformedBody's reasons
_SHAPE_CHARS = 300


def shape(body: bytes) -> str:
    """The body's structure with no value in it: `{data:null, meta:{action:str, ...}}`."""
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return f"not JSON ({len(body)} bytes)"
    return _shape(doc, 2)[:_SHAPE_CHARS]


def _shape(value, depth: int) -> str:
    if isinstance(value, dict):
        if depth == 0:
            return "{...}" if value else "{}"
        inner = ", ".join(f"{_key(k)}:{_shape(v, depth - 1)}" for k, v in sorted(value.items())[:12])
        return "{" + inner + (", ..." if len(value) > 12 else "") + "}"
    if isinstance(value, list):
        return f"[{len(value)}]" if depth == 0 or not value else f"[{len(value)}× {_shape(value[0], depth - 1)}]"
    return {str: "str", bool: "bool", int: "int", float: "num", type(None): "null"}.get(type(value), "?")


def _key(key: str) -> str:
    """A key as written when it is a plain name; anything else (an email used as a key) hidden."""
    return (
        key
        if len(key) <= 40 and key.replace("_", "").replace("-", "").replace(".", "").isalnum() and "@" not in key
        else "?"
    )


def item(reason: str, body: bytes) -> dict:
    """What `leadrelay ignored` keeps for one unusable delivery."""
    return {"reason": reason, "shape": shape(body)}
