"""How many countries leadrelay recognises by name in at least 5 languages.

Each country's CLDR name in each of the 100 languages Babel ships the most territory
names for is looked up as a form's answer would be. Not a timing: a coverage figure for
the country table (places.py). An optional argument runs another checkout's code, for a
before/after figure: `python bench/countries.py /path/to/older/checkout`.
"""

import sys

if len(sys.argv) > 1:
    sys.path.insert(0, sys.argv[1])

import pycountry  # noqa: E402
from babel import Locale, localedata  # noqa: E402

from workers.identity.places import country  # noqa: E402


def main() -> None:
    languages = sorted(
        (name for name in localedata.locale_identifiers() if "_" not in name),
        key=lambda name: -len(Locale.parse(name).territories),
    )[:100]
    names = [Locale.parse(language).territories for language in languages]
    widely = found = 0
    for entry in pycountry.countries:
        code = entry.alpha_2
        recognised = sum(1 for table in names if code in table and country(table[code]) == code.lower())
        widely += recognised >= 5
        found += recognised
    total = len(pycountry.countries) * len(languages)
    print(f"{widely} of {len(pycountry.countries)} countries recognised by name in at least 5 of 100 languages")
    print(f"names recognised: {found} of {total} ({found / total:.1%})")


if __name__ == "__main__":
    main()
