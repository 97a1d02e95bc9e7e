"""Answers that are templates, not anyone's data: Meta's Lead Ads Testing Tool's placeholders
and its dummy address, a script's unfilled `{{...}}`.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping, cast

from workers.identity import matchkeys

# Meta's Lead Ads Testing Tool answers every question with a placeholder (brackets or not)
# and its own dummy address, and a script can leave a template unfilled: no one's data,
# never hashed (the lead itself still flows).
_TEMPLATE_ANSWER = re.compile(
    r"\s*(?:<?\s*test lead\s*:\s*dummy data for [^>]*>?|\{\{[^{}]*\}\}|test@meta\.com|test@fb\.com)\s*",
    re.IGNORECASE,
)


def without_templates(fields: Mapping[str, object]) -> tuple[Mapping[str, object], list[dict]]:
    """The fields less the answers that are templates, and one dropped entry for each."""
    try:
        text = "\n".join(cast("Iterable[str]", fields.values()))  # every answer text: the common case, in one call
    except TypeError:
        text = "\n".join([raw if isinstance(raw, str) else "\n".join(values(raw)) for raw in fields.values()])
    if "{{" not in text and "test" not in text.lower():
        return fields, []  # the common case (`test` is in every template answer but `{{...}}`)
    if not any(_TEMPLATE_ANSWER.fullmatch(v) for raw in fields.values() for v in values(raw)):
        return fields, []
    found = {key: [v for v in values(raw) if _TEMPLATE_ANSWER.fullmatch(v)] for key, raw in fields.items()}
    kept = {key: [v for v in values(raw) if v not in found[key]] for key, raw in fields.items()}
    name = {matchkeys.FULL_NAME: "fn"}  # a full name's placeholder stands for both names
    gone = [name.get(key, key) for key, values in found.items() for _ in values]
    return kept, [{"key": key, "reason": "test_placeholder"} for key in gone]


def values(raw) -> Iterable[str]:
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, (list, tuple)):
        return [v for v in raw if isinstance(v, str)]
    return []
