"""Scores a set of leads written from Meta's rules and the countries' conventions by a
hand that had not read the parser: each lead's field_data through the path the worker
takes (events/leadevents.hashed), each expected key compared with what would be sent.

    .venv/bin/python bench/unseenkeys.py tests/fixtures/userdata/unseen/keys-r2.jsonl [--show wrong]

A case file holds one lead per line: {"id", "form_region", "field_data", "expect": {key:
plaintext Meta wants hashed, or null: send nothing}, "why"}. Prints right, wrong (a hash
that is not the expected one, or one sent where nothing should be), dropped (nothing sent
where a value was expected) and rightly dropped, in all and per key.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workers.events import leadevents  # noqa: E402


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def score(path: Path) -> tuple[Counter, Counter, list[str]]:
    total, by_key, wrong = Counter(), Counter(), []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        case = json.loads(line)
        region = (case.get("form_region") or "US").upper()
        sent = leadevents.hashed({"leadgen_id": str(number)}, {"field_data": case["field_data"]}, region)["user_data"]
        for key, expected in case["expect"].items():
            got = sent.get(key) or []
            got = [got] if isinstance(got, str) else list(got)
            if expected is None:
                outcome = "rightly dropped" if not got else "wrong"
            elif not got:
                outcome = "dropped"
            else:
                outcome = "right" if _sha(expected) in got and len(got) == 1 else "wrong"
            total[outcome] += 1
            by_key[(key, outcome)] += 1
            if outcome in ("wrong", "dropped"):
                wrong.append(f"{outcome:8} {case['id']:<28} {key:8} expected {expected!r} ({case.get('why', '')[:80]})")
    return total, by_key, wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", type=Path)
    parser.add_argument("--show", choices=["wrong", "all"], help="list the keys sent wrong (and dropped, with all)")
    args = parser.parse_args()
    total, by_key, wrong = score(args.cases)
    keys = sum(total.values())
    print(f"{keys} keys: " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(total.items())))
    for key in sorted({k for k, _ in by_key}):
        print(f"  {key:8} " + ", ".join(f"{n} {o}" for (k, o), n in sorted(by_key.items()) if k == key))
    for line in wrong:
        if args.show == "all" or (args.show == "wrong" and line.startswith("wrong")):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
