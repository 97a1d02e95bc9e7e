"""The match keys: one table of what each is called by the mapping file, by Meta, by
Lead Ads questions and by form tools, and the raw values a Lead Ads lead gives for each.

Values read here are still personal data: hash them (userdata.py), never keep or log them.
"""

from __future__ import annotations

import re
import unicodedata

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


# Titles written before a name, in the languages of the forms we see (the languages of
# genders.py where a title comes first): never a first name. Compared casefolded, without
# a trailing dot. Words that are also names (Don, Anh, the surname Pan) are left out: a title is
# only dropped when it cannot be a name.
TITLES = frozenset(
    "mr mrs ms miss mx dr prof sir madam mme mlle monsieur madame herr frau sr sra srta dra engr atty capt "
    "doña sigra signor signora dott dhr mevr pani paní ing mgr bayan sayın dl dna "
    "bapak bpk ibu encik puan г-н г-жа господин госпожа пан пані κ κα κος κυρία "
    "السيد السيدة د מר גברת ד״ר श्री श्रीमती सुश्री डॉ นาย นาง นางสาว".casefold().split()
)  # casefolded as words are compared: Greek κος ends in a final sigma, casefolded to σ


# Written after a name and a comma (`Smith, Jr.`): never the given name of `Surname, Given`.
SUFFIXES = frozenset("jr sr ii iii iv phd md esq mba cpa rn dds".split())


def split_full_name(values: dict[str, list[str]], full_names: list[str], country: str | None = None) -> list[dict]:
    """Add first and last names from full names, only when neither was given: the first
    word, then the rest, split on any whitespace (an ideographic or no-break space too).
    A leading title (Mr, Dr, Frau, Sra...) is dropped when a name follows it, and so is any
    dotted abbreviation of two letters or more (`Engr.`, `Eng.`, `Capt.`): a first name is
    never written with a dot. `Mensah, Kwame` (surname, comma, given name) is read that
    way round; `Smith, Jr.` is a suffix, not a given name.

    `country` (the lead's, alpha-2) decides the order of a name in Latin letters where the
    country writes the family name first: family first in Vietnamese letters (`Nguyễn Văn
    An`); otherwise (`Nguyen Van An`, any Hungarian name) either order is possible, so
    neither key is sent. Returns what was dropped that way (`{"key", "reason"}`)."""
    if "fn" in values or "ln" in values:
        return []
    dropped: list[dict] = []
    for full in full_names:
        script = _family_first_script(full)
        family_first = script or ("," not in full and _family_first_letters(full, country))
        if family_first is None:
            dropped += [{"key": key, "reason": "uncertain_name_order"} for key in ("fn", "ln")]
            continue
        words = full.split() if script else _given_first(full).split()
        while len(words) > 1 and _title(words[0]):
            words = words[1:]
        if family_first:
            if len(words) > 1:  # 王 小明, 김 민준, 山田 太郎, Nguyễn Văn An: the family name first
                values.setdefault("ln", []).append(words[0])
                values.setdefault("fn", []).append(" ".join(words[1:]))
            continue  # written as one word (王小明): where the family name ends is not certain
        if not words:
            continue
        values.setdefault("fn", []).append(words[0])
        if len(words) > 1:
            values.setdefault("ln", []).append(" ".join(words[1:]))
    return dropped


# Countries that write a name in Latin letters family name first, and what makes that order
# certain in one name. Vietnamese written with its own letters (đ, horn and breve vowels,
# tone marks below or hooked above; checked decomposed) keeps its order: `Nguyễn Văn An`.
# Hungarian has no such sign: Hungarians write `Kovács Péter` at home and `Péter Kovács` on
# forms in other languages, with the same letters, so nothing decides (None for every name).
_FAMILY_FIRST_LETTERS = {
    "hu": None,
    "vn": re.compile("[đăơư\u0309\u0323\u031b\u0306]"),
}


def _family_first_letters(full: str, country: str | None) -> bool | None:
    """False where the country writes given names first; True where its letters make
    family-first certain; None where either order is possible (one word too: a family or a
    given name)."""
    if country not in _FAMILY_FIRST_LETTERS:
        return False
    letters = _FAMILY_FIRST_LETTERS[country]
    certain = len(full.split()) > 1 and letters and letters.search(unicodedata.normalize("NFD", full.casefold()))
    return True if certain else None


def _family_first_script(full: str) -> bool:
    """A name in Han, Hangul or Japanese kana: those scripts write the family name first."""
    letters = [ch for ch in full if ch.isalpha()]
    return bool(letters) and all(_CJK.match(ch) for ch in letters)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u1100-\u11ff\uf900-\ufaff]")


def _title(word: str) -> bool:
    bare = word.casefold().rstrip(".")
    return bare in TITLES or (word.endswith(".") and len(bare) >= 2 and bare.isalpha())


def _given_first(full: str) -> str:
    """`Surname, Given` as `Given Surname`; a suffix after the comma is dropped instead."""
    surname, comma, given = full.partition(",")
    if not comma or "," in given or not surname.strip() or not given.strip():
        return full.replace(",", " ")
    if all(word.casefold().strip(".") in SUFFIXES for word in given.split()):
        return surname
    return f"{given.strip()} {surname.strip()}"


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
