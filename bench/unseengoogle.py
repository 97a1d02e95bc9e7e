"""Scores Google Ads lead form cases written from Google's documents and the countries'
numbering plans by a hand that had not read the parser: each body read as the webhook reads
it (sources/googleads.py) and hashed as the worker sends it (intake/googleleads.py), the
email, phone and click id compared with the normalised values the case expects (null:
nothing may be sent for it).

    .venv/bin/python bench/unseengoogle.py tests/fixtures/unseen/google-r1.jsonl [--show]

A case: {"id", "region" (the destination's, or null), "body", "expect": {"email", "phone",
"gclid"}, "judgement"}. Prints right and wrong (cases marked judgement apart) and, with
--show, each wrong one.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from benchenv import print_scores  # noqa: E402

from helpers import judge_google_case as judge  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", type=Path)
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    cases = [json.loads(line) for line in args.cases.read_text().splitlines() if line.strip()]
    scores: Counter = Counter()
    for case in cases:
        wrong = judge(case)
        group = "judgement" if case.get("judgement") else "google"
        scores[(group, "wrong" if wrong else "right")] += 1
        if wrong and args.show:
            print(f"WRONG {case['id']}: {'; '.join(wrong)}")
    print_scores(len(cases), scores, 10)


if __name__ == "__main__":
    main()
