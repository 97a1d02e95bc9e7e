"""Cost of normalising and hashing match keys: ours next to Meta's Python SDK, same records.

Builds --records lead records (deterministic: --seed) in the shapes forms deliver, from many
countries, then times `workers.identity.userdata.build` and the SDK's `UserData.normalize()` over the
same records, alternating slice by slice (50 records), for --rounds rounds, and prints µs per record (median of the
rounds) and the ratio. Country is given as a code and gender as f/m in every record,
because the SDK refuses anything else; our build reads names and words too. The SDK does
less (no phone validation, no dates, no states), so the ratio is the price of being right.

    .venv/bin/python bench/userdata.py [--records 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from facebook_business.adobjects.serverside.gender import Gender  # noqa: E402
from facebook_business.adobjects.serverside.user_data import UserData  # noqa: E402

from workers.identity.userdata import build  # noqa: E402

PEOPLE = [  # (country, phone as people type it, city, state, zip, first, last)
    ("us", "(650) 555-1212", "Mountain View", "CA", "94035-1234", "Mary", "Smith"),
    ("us", "+1 201 555 0123", "New York", "NY", "10001", "John", "O'Brien"),
    ("gb", "+44 7400 123456", "London", "", "SW1A 1AA", "Olivia", "Jones"),
    ("de", "+49 1512 3456789", "München", "Bayern", "80331", "Jürgen", "Müller"),
    ("fr", "+33 6 12 34 56 78", "Saint-Étienne", "", "42000", "Valéry", "Dupont"),
    ("es", "+34 612 34 56 78", "Sevilla", "Andalucía", "41001", "José", "García"),
    ("br", "+55 11 96123-4567", "São Paulo", "SP", "01310-100", "João", "Silva"),
    ("in", "+91 81234 56789", "Mumbai", "Maharashtra", "400001", "Priya", "Sharma"),
    ("jp", "+81 90-1234-5678", "東京", "東京都", "100-0001", "太郎", "山田"),
    ("gr", "+30 691 234 5678", "Αθήνα", "", "10552", "Νίκος", "Παπαδόπουλος"),
    ("pl", "+48 512 345 678", "Kraków", "", "30-001", "Łukasz", "Nowak"),
    ("tr", "+90 501 234 56 78", "İstanbul", "", "34000", "Çağlar", "Yılmaz"),
]
DATES = ["1997-02-16", "19870419", "1990-12-03", "19751105"]


def records(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        country, phone, city, state, zp, first, last = rng.choice(PEOPLE)
        out.append(
            {
                "em": f"{first}.{last}{i}@Example.com".replace("'", ""),
                "ph": phone,
                "fn": first,
                "ln": last,
                "ct": city,
                "st": state,
                "zp": zp,
                "country": country,
                "db": rng.choice(DATES),
                "ge": rng.choice("fm"),
                "external_id": f"crm-{i}",
            }
        )
    return out


def ours(batch: list[dict]) -> float:
    started = time.perf_counter()
    for fields in batch:
        build(fields, region="US")
    return time.perf_counter() - started


def sdk(batch: list[dict]) -> float:
    prepared = [
        UserData(
            emails=[r["em"]],
            phones=[r["ph"]],
            first_names=[r["fn"]],
            last_names=[r["ln"]],
            cities=[r["ct"]],
            states=[r["st"]] if r["st"] else None,
            zip_codes=[r["zp"]],
            country_codes=[r["country"]],
            dates_of_birth=[r["db"]],
            genders=[Gender.FEMALE if r["ge"] == "f" else Gender.MALE],
            external_ids=[r["external_id"]],
        )
        for r in batch
    ]
    started = time.perf_counter()
    for user_data in prepared:
        user_data.normalize()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    batch = records(args.records, args.seed)
    ours(batch[:50]), sdk(batch[:50])  # warm-up: imports, lazily built tables
    times: dict[str, list[float]] = {"ours": [], "sdk": []}
    slices = [batch[i : i + 50] for i in range(0, len(batch), 50)]
    for n in range(args.rounds):  # slice by slice, turn about: a machine's slow second falls on both
        spent = {"ours": 0.0, "sdk": 0.0}
        for part in slices:
            for name in ("ours", "sdk") if n % 2 == 0 else ("sdk", "ours"):
                spent[name] += ours(part) if name == "ours" else sdk(part)
        times["ours"].append(spent["ours"])
        times["sdk"].append(spent["sdk"])
    per = {name: statistics.median(values) / args.records * 1e6 for name, values in times.items()}
    ratios = [a / b for a, b in zip(times["ours"], times["sdk"])]
    print(f"{args.records} records, {args.rounds} rounds, median µs per record")
    print(f"  leadrelay build         {per['ours']:7.1f} µs")
    print(f"  SDK UserData.normalize  {per['sdk']:7.1f} µs")
    print(
        f"  ratio ours/SDK          {statistics.median(ratios):7.2f}  (min {min(ratios):.2f}, max {max(ratios):.2f}; "
        f"goal: at most 1.10)"
    )


if __name__ == "__main__":
    main()
