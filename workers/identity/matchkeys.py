"""The match keys: one table of what each is called by the mapping file, by Meta, by
Lead Ads questions and by form tools, and the raw values a Lead Ads lead gives for each.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

# setting name   Meta key       Lead Ads question keys (Meta's prefill keys, and those
#                               seen in the wild)        conventional form refs/labels        form answer types
TABLE = (
    ("email", "em", ("email", "work_email"), ("email", "email_address", "work_email"), ("email", "INPUT_EMAIL")),
    (
        "phone",
        "ph",
        ("phone_number", "work_phone_number", "phone"),
        ("phone", "phone_number", "mobile"),
        ("phone_number", "INPUT_PHONE_NUMBER"),
    ),
    ("first_name", "fn", ("first_name",), ("first_name", "firstname"), ()),
    ("last_name", "ln", ("last_name",), ("last_name", "lastname", "surname"), ()),
    ("full_name", None, ("full_name",), ("name", "full_name", "your_name"), ()),  # split into fn and ln
    ("date_of_birth", "db", ("date_of_birth", "dob"), ("date_of_birth", "dob", "birthday"), ()),
    ("gender", "ge", ("gender",), ("gender",), ()),
    ("city", "ct", ("city",), ("city",), ()),
    ("state", "st", ("state", "province"), ("state", "province", "region"), ()),
    (
        "zip",
        "zp",
        ("zip_code", "post_code", "postal_code", "zip"),
        ("zip", "zip_code", "postcode", "post_code", "postal_code"),
        (),
    ),
    ("country", "country", ("country",), ("country",), ()),
    ("external_id", "external_id", (), ("external_id",), ()),
)

SETTINGS = tuple(row[0] for row in TABLE)  # what a form's table in the mapping file may name
KEY_FOR = {row[0]: row[1] for row in TABLE if row[1]}  # setting name -> Meta key
HASHED = tuple(KEY_FOR.values())  # sent as SHA-256 hashes
# Every key Meta matches a person on, counted per event name for match-quality figures.
ALL = ("lead_id", *HASHED, "fbc", "fbp", "client_ip_address", "client_user_agent")
FORM_REFS = {row[0]: set(row[3]) for row in TABLE}
FORM_TYPES = {row[0]: set(row[4]) for row in TABLE if row[4]}
# Custom Lead Ads question keys are not in here: their answers are never read or kept.
_LEAD_ADS = {name: row[0] for row in TABLE for name in row[2]}
FULL_NAME = "full_name"  # raw full names beside the keys, until the lead's country splits them


def from_lead_ads(field_data) -> dict[str, list[str]]:
    """Raw values per Meta key from a lead's `field_data`, by question key, never by position."""
    out: dict[str, list[str]] = {}
    full_names: list[str] = []
    for item in field_data if isinstance(field_data, list) else []:
        if not isinstance(item, dict):
            continue
        setting = _LEAD_ADS.get(str(item.get("name", "")).strip().lower())
        values = [v for v in item.get("values") or [] if isinstance(v, str) and v.strip()]
        if setting == "full_name":
            full_names.extend(values)
        elif setting:
            out.setdefault(KEY_FOR[setting], []).extend(values)
    if full_names:
        out[FULL_NAME] = full_names  # split by userdata.build, which knows the lead's country
    return out
