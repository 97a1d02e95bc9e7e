"""Lead Ads `field_data` to raw match-key values, by question key, never by position."""

from __future__ import annotations

# Prefill keys Meta documents, plus the ones seen in the wild (spec §2). Custom
# question keys are not mapped: their answers are never read or kept.
KEY_FOR_FIELD = {
    "email": "em",
    "work_email": "em",
    "phone_number": "ph",
    "work_phone_number": "ph",
    "phone": "ph",
    "first_name": "fn",
    "last_name": "ln",
    "city": "ct",
    "state": "st",
    "province": "st",
    "zip_code": "zp",
    "post_code": "zp",
    "postal_code": "zp",
    "zip": "zp",
    "country": "country",
    "date_of_birth": "db",
    "dob": "db",
    "gender": "ge",
}


def match_values(field_data) -> dict[str, list[str]]:
    """Raw values per match key (still PII: hash them, never keep or log them)."""
    out: dict[str, list[str]] = {}
    full_names: list[str] = []
    for item in field_data if isinstance(field_data, list) else []:
        if not isinstance(item, dict):
            continue
        name = str(item.get("name", "")).strip().lower()
        values = [v for v in item.get("values") or [] if isinstance(v, str) and v.strip()]
        if name == "full_name":
            full_names.extend(values)
        elif name in KEY_FOR_FIELD:
            out.setdefault(KEY_FOR_FIELD[name], []).extend(values)
    # Split full_name only when that is all there is: first word, then the rest.
    if "fn" not in out and "ln" not in out:
        for full in full_names:
            first, _, rest = full.strip().partition(" ")
            out.setdefault("fn", []).append(first)
            if rest.strip():
                out.setdefault("ln", []).append(rest.strip())
    return out
