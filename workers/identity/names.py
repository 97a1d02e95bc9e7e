"""Full names split into `fn` and `ln` by the lead's naming convention, only where one
reading is left. Why, with each convention's source: docs/decisions/names.md."""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

# How a country writes a full name. Sources per row in docs/decisions/names.md.
GIVEN_FIRST = "given_first"  # given name, one surname: two units, or nothing
TWO_SURNAMES = "two_surnames"  # Spain, Hispanic America: given name(s), then two surnames
PORTUGUESE = "portuguese"  # up to two given names, up to four surnames: two units only
PATRONYMIC = "patronymic"  # Iceland: given name(s), then -son/-dóttir
EAST_SLAVIC = "east_slavic"  # Фамилия Имя Отчество, or Имя Отчество Фамилия; two words either way
FAMILY_FIRST = "family_first"  # family name first at home, either order in Latin letters
VIETNAMESE = "vietnamese"  # family, middle, given: certain in Vietnamese letters only
PATRONYMIC_CHAIN = "patronymic_chain"  # given, father's, grandfather's: no family name
ARABIC = "arabic"  # given, father's, ... family (`Al X`); `Abdul X` is one name
MIXED = "mixed"  # several conventions, or either order: Latin names decided only by marks
NO_FAMILY_NAME = "no_family_name"  # Myanmar, Bhutan: no name is a surname
MONGOLIAN = "mongolian"  # father's name in the genitive, then the given name
INITIAL_FIRST = "initial_first"  # Tamil usage: an initial is the father's name


def _rows(convention: str, codes: str) -> dict[str, str]:
    return dict.fromkeys(codes.split(), convention)


CONVENTIONS = {
    **_rows(TWO_SURNAMES, "es mx ar co cl pe ve ec bo py uy gt hn sv ni cr pa cu do pr gq"),
    **_rows(PORTUGUESE, "pt br ao mz cv gw st tl"),
    **_rows(PATRONYMIC, "is"),
    **_rows(EAST_SLAVIC, "ru by ua kz kg"),
    **_rows(FAMILY_FIRST, "cn tw hk mo jp kr kp hu kh"),
    **_rows(VIETNAMESE, "vn"),
    **_rows(PATRONYMIC_CHAIN, "et er so"),
    **_rows(ARABIC, "sa ae qa kw bh om ye iq jo lb sy ps eg ly tn dz ma sd mr"),
    **_rows(MIXED, "sg my bn ug rw af bd"),
    **_rows(NO_FAMILY_NAME, "mm bt"),
    **_rows(MONGOLIAN, "mn"),
    **_rows(INITIAL_FIRST, "in lk"),
}

# Titles and honorifics written before a name, in the languages of the forms we see: never a
# name. Compared casefolded, without a trailing dot. Words that are also names (Don, Anh, the
# surnames Pan and Tan) are left out: a title is dropped only when it cannot be a name.
TITLES = frozenset(
    "mr mrs ms miss mx dr prof sir madam mme mlle monsieur madame herr frau sr sra srta dra engr atty capt "
    "doña sigra signor signora dott dhr mevr pani paní ing mgr bayan sayın dl dna "
    "bapak bpk ibu encik puan г-н г-жа господин госпожа пан пані κ κα κος κυρία "
    "السيد السيدة د מר גברת ד״ר श्री श्रीमती सुश्री डॉ นาย นาง นางสาว "
    "alhaji alhaja alhajji alhaja hajia hajiya hajja hajjah hajah chief sheikh shaikh sheik pastor rev revd "
    "reverend evangelist prophet apostle bishop imam ustaz ustazah datuk dato datin tun mallam barr hon "
    "ato wzro woizero w/ro".casefold().split()
)  # casefolded as words are compared: Greek κος ends in a final sigma, casefolded to σ

# Written after a name (`Smith Jr`, `Smith, Jr.`): never a name.
SUFFIXES = frozenset("jr sr ii iii iv phd md esq mba cpa rn dds".split())
_TITLES_AND_SUFFIXES = TITLES | SUFFIXES

# Words that belong to the name after them, never first: `van der Berg`, `dos Santos`, `Al Sabah`.
PARTICLES = frozenset(
    "de del della dei di da das do dos la las los le lo du des d van vander vanden von vom zu zum zur "
    "der den ter ten te het op dela delos san sta al el ben bou ní nic mhic uí ó".split()
)
_CONNECTORS = frozenset({"y", "e", "i"})  # `García y López`, `Silva e Costa`: one surname
_ONE_NAME_WITH_NEXT = frozenset({"abdul", "abdel", "abd", "abdal", "abdur", "abdol", "abu", "abou"})
_NASAB = frozenset({"bin", "binti", "bint", "binte", "ibn", "a/l", "a/p", "s/o", "d/o"})
_ICELANDIC = re.compile(r"(son|dóttir|bur)$")
_EAST_SLAVIC_PATRONYMIC = re.compile(r"(ович|евич|ич|овна|евна|ична|инична|ovich|evich|ovna|evna|ichna)$")
_MONGOLIAN_GENITIVE = re.compile(r"(ын|ийн|ний|гийн|ны|ий|iin|yn|in)$")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u1100-\u11ff\uf900-\ufaff]")
_VIETNAMESE_LETTERS = re.compile("[đăơư\u0309\u0323\u031b\u0306]")  # its own letters, checked decomposed


def split_full_name(values: dict, full_names: Iterable[str], country: str | None = None) -> list[dict]:
    """Add `fn` and `ln` from full names when neither was given; return what was dropped
    (`{"key", "reason"}`). `country` (alpha-2) names the convention; none is given-first."""
    if "fn" in values or "ln" in values:
        return []
    dropped: list[dict] = []
    for full in full_names:
        given, family, reason = split(full, country)
        for key, part in (("fn", given), ("ln", family)):
            if part:
                values.setdefault(key, []).append(part)
            elif reason:
                dropped.append({"key": key, "reason": reason})
    return dropped


def split(full: str, country: str | None = None) -> tuple[str | None, str | None, str | None]:
    """(given name, family name, why a part is missing) for one full name."""
    convention = CONVENTIONS.get((country or "").lower(), GIVEN_FIRST)
    if _all_cjk(full):  # 山田 太郎, 김 민준: family name first; one word: where it ends is unknown
        words = full.split()
        return (" ".join(words[1:]), words[0], None) if len(words) > 1 else (None, None, "uncertain_name_split")
    if full.count(",") == 1:
        return _comma(full, convention)
    words = full.replace(",", " ").split()
    words = without_titles(words)
    while len(words) > 1 and (is_title(words[-1]) or _initial(words[-1])):
        words = words[:-1]
    if any(is_title(word) for word in words[1:]):  # `Ana Jr Ruiz`: not a name we can read
        return None, None, "uncertain_name_split"
    if not words or (len(words) == 1 and (_title(words[0]) or words[0].casefold().strip(".") in SUFFIXES)):
        return None, None, "title_only" if words else None
    if any(_initial(w) for w in words):
        return _with_initials(words, convention)
    marked = _family_in_capitals(words)
    if marked:
        return _by_capitals(words, marked, convention)
    units = _units(words)
    if convention not in (FAMILY_FIRST, VIETNAMESE) and any(u.casefold() in _NASAB for u in units):
        return _nasab(units)
    return _by_convention(units, words, convention, full)


def without_titles(words: list[str]) -> list[str]:
    """Leading titles and honorifics gone (`Dr.`, `Alhaji`, `Engr.`), while a name follows."""
    while len(words) > 1 and is_title(words[0]):
        words = words[1:]
    return words


def _by_convention(units: list[str], words: list[str], convention: str, full: str):
    count = len(units)
    if count == 1:
        if convention in (NO_FAMILY_NAME, FAMILY_FIRST, VIETNAMESE, MIXED):
            return None, None, "uncertain_name_split"  # a family name alone, or a given name
        return units[0], None, None
    if convention == NO_FAMILY_NAME:
        return None, None, "no_family_name"
    if convention == VIETNAMESE and _VIETNAMESE_LETTERS.search(unicodedata.normalize("NFD", full.casefold())):
        return units[-1], units[0], None  # Nguyễn Thị Mai: family, middle, given
    if convention in (FAMILY_FIRST, VIETNAMESE, MIXED):
        return None, None, "uncertain_name_order"
    if convention == PATRONYMIC and _ICELANDIC.search(units[-1].casefold()):
        return (units[0] if count == 2 else None), units[-1], (None if count == 2 else "uncertain_name_split")
    if convention == EAST_SLAVIC:
        return _east_slavic(words)
    if convention == MONGOLIAN:  # the father's name is no family name
        if count == 2 and _MONGOLIAN_GENITIVE.search(units[0].casefold()):
            return units[1], None, "no_family_name"
        return None, None, "uncertain_name_order"
    if count == 2:
        return units[0], units[1], None
    if convention == TWO_SURNAMES and count == 4:
        return " ".join(units[:2]), " ".join(units[2:]), None  # María José García López
    if convention == PATRONYMIC_CHAIN:
        return units[0], None, "no_family_name"  # given, father's, grandfather's
    if convention == ARABIC:
        family = units[-1] if _particle_unit(units[-1]) else None  # ... Al Sabah
        return units[0], family, None if family else "uncertain_name_split"
    return None, None, "uncertain_name_split"


def _comma(full: str, convention: str):
    """`Surname, Given`; `Smith, Jr.` is a suffix, not a given name."""
    surname, _, given = (part.strip() for part in full.partition(","))
    if not surname or not given:
        return split(surname or given, None)
    if all(w.casefold().strip(".") in SUFFIXES for w in given.split()):
        return split(surname, None)
    given_words = [w for w in without_titles(given.split()) if not _initial(w)]
    if not given_words:
        return None, surname, "initials"
    several = len(_units(given_words)) > 1 and convention in (GIVEN_FIRST, ARABIC, PATRONYMIC_CHAIN)
    return (None if several else " ".join(given_words)), surname, ("uncertain_name_split" if several else None)


def _with_initials(words: list[str], convention: str):
    """`J. Smith`: the surname, no first name; `John F. Kennedy`: the middle initial goes."""
    if convention == INITIAL_FIRST:  # R. Karthik: the initial is the father's name
        return None, None, "initials"
    if (
        convention == MONGOLIAN and _initial(words[0]) and len(words) == 2
    ):  # Ts. Elbegdorj: father's initial, given name
        return words[1], None, "no_family_name"
    names = [w for w in words if not _initial(w)]
    if not names:
        return None, None, "initials"
    if _initial(words[0]):
        units = _units(names)
        return None, (units[0] if len(units) == 1 else None), "initials"
    given, family, reason = _by_convention(_units(names), names, convention, " ".join(names))
    return given, family, reason


def _by_capitals(words: list[str], marked: tuple[int, int], convention: str):
    """`TANAKA Hiroshi`, `Jean DUPONT`: the word in capitals is the family name."""
    start, end = marked
    family = " ".join(words[start:end])
    given = words[:start] + words[end:]
    if convention in (FAMILY_FIRST, VIETNAMESE, MIXED, NO_FAMILY_NAME, MONGOLIAN) or len(_units(given)) == 1:
        return " ".join(given), family, None  # CHAN Tai Man: a two-syllable given name
    return None, family, "uncertain_name_split"


def _family_in_capitals(words: list[str]) -> tuple[int, int] | None:
    """The one run of words in capitals at either end, when the others are not."""
    caps = [len(w) > 1 and w.isupper() for w in words]
    if len(words) < 2 or all(caps) or not any(caps):
        return None
    start = caps.index(True)
    end = start + caps[start:].index(False) if False in caps[start:] else len(words)
    if any(caps[end:]) or (start and end != len(words)):
        return None
    return start, end


def _nasab(units: list[str]):
    """`Ahmad bin Ismail`, `Khalid bin Hamad Al Marri`: the given name; no surname is certain."""
    at = next(i for i, u in enumerate(units) if u.casefold() in _NASAB)
    return (units[0] if at == 1 else None), None, "no_family_name"


def _east_slavic(words: list[str]):
    """Иванов Иван Иванович, Иван Иванович Иванов: the patronymic decides the order."""
    folded = [w.casefold() for w in words]
    if len(words) == 3 and _EAST_SLAVIC_PATRONYMIC.search(folded[2]) and not _EAST_SLAVIC_PATRONYMIC.search(folded[1]):
        return words[1], words[0], None
    if len(words) == 3 and _EAST_SLAVIC_PATRONYMIC.search(folded[1]):
        return words[0], words[2], None
    return None, None, "uncertain_name_order"


def _units(words: list[str]) -> list[str]:
    """Words grouped into names: particles with the name after them, `Abdul` with its
    second half, a connector with the names on both sides."""
    units: list[str] = []
    pending: list[str] = []
    for i, word in enumerate(words):
        low = word.casefold().rstrip("'’")
        if i and i < len(words) - 1 and (low in PARTICLES or low in _CONNECTORS and units):
            if low in _CONNECTORS and not pending:
                pending = [units.pop(), word]
            else:
                pending.append(word)
            continue
        if low in _ONE_NAME_WITH_NEXT and i < len(words) - 1:
            pending.append(word)
            continue
        units.append(" ".join([*pending, word]))
        pending = []
    return units + ([" ".join(pending)] if pending else [])


def _particle_unit(unit: str) -> bool:
    first = unit.split()[0].casefold()
    return first in {"al", "el"} or first.startswith(("al-", "el-"))


def _initial(word: str) -> bool:
    """`J.`, `J.W.`, `J`: cased letters standing alone."""
    letters = [p for p in re.split(r"[.]+", word) if p]
    return bool(letters) and all(len(p) == 1 and p.isalpha() and p != p.swapcase() for p in letters)


def is_title(word: str) -> bool:
    """A title, an honorific or a suffix: `Dr.`, `Alhaji`, `Jr`."""
    if word.isalpha():  # no dot to strip: one look in both lists
        return word.casefold() in _TITLES_AND_SUFFIXES
    return _title(word) or word.casefold().strip(".") in SUFFIXES


def _title(word: str) -> bool:
    bare = word.casefold().rstrip(".")
    return bare in TITLES or (word.endswith(".") and len(bare) >= 2 and bare.isalpha())


def _all_cjk(full: str) -> bool:
    letters = [ch for ch in full if ch.isalpha()]
    return bool(letters) and all(_CJK.match(ch) for ch in letters)
