"""Postcodes read by the country's own format: a postal mark, a label, a country prefix or a
city beside the code never reach `zp`. Formats: the UPU's postcode list, as
https://en.wikipedia.org/wiki/List_of_postal_codes gives it (numeric codes only; others are
kept as their letters and digits)."""

from __future__ import annotations

import re

# Countries whose postcodes are all digits, by how many (written with any grouping: JP
# `150-0002`, PL `00-950`, SE `114 55`, BR `01310-100`). US ZIPs are read in userdata.
_DIGITS = {
    3: "is fo om ls",
    4: "at be bg ch cy dk hu lu no nz ph si za au am af bd et li md al ge lv mk tn ve py bh",
    5: "de fr it es fi ee hr me rs ba tr my id th mx cr do eg kw ma dz sa iq jo lk np pk sn ke zm uy gr cz sk se pl "
    "lt ua kr mc sm va",
    6: "cn in ru by sg ec co ro kg tj tm uz",
    7: "jp pt il",
    8: "br cl",
    10: "ir",
}
DIGITS = {country: count for count, countries in _DIGITS.items() for country in countries.split()}
_DIGIT_RUN = re.compile(r"\d(?:[\s\-–]?\d)*")  # digits, single spaces or dashes between them


# Where the official code carries the country's letters (Moldova's `MD-2001`), whether Meta
# holds `md2001` or `2001` is not known: such a code is dropped, never guessed.
_OFFICIAL_PREFIX = frozenset({"md"})


class NotAPostcode(ValueError):
    pass


def read(value: str, country: str | None) -> str | None:
    """The code's digits for a country of numeric postcodes (None: no such country).

    Raises:
        NotAPostcode: no run of digits of the country's length, or more than one.
    """
    if country in _OFFICIAL_PREFIX:
        raise NotAPostcode("prefix_undecided")
    count = DIGITS.get(country or "")
    if count is None:
        return None
    found = [run for run in (re.sub(r"\D", "", m) for m in _DIGIT_RUN.findall(value)) if len(run) == count]
    if len(found) != 1:
        raise NotAPostcode("not_a_postcode")
    return found[0]
