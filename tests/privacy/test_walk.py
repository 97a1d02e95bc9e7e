"""Which records hold a person: an id of theirs as a whole token only, a hash only in a
dataset the caller may reach (what a record names, else the environment's)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from workers.privacy.walk import Marks

EM = "a" * 64


def _marks(**fields) -> Marks:
    return Marks(**{"scope": {"acme"}, "names": {"1001": "acme", "2001": "brandb"}, **fields}).compile()


@given(lead=st.integers(10**14, 10**16), before=st.integers(1, 9), after=st.integers(0, 9))
def test_a_lead_id_is_found_as_itself_never_inside_a_longer_number(lead, before, after):
    marks = _marks(owned={str(lead)})
    assert marks.holds(f"leadrelay:seen:lead-meta-{lead}")
    assert marks.holds(json.dumps({"leadgen_id": str(lead)}))
    assert not marks.holds(f"lead-meta-{before}{lead}")
    assert not marks.holds(f"lead-meta-{lead}{after}")


def test_a_hash_is_theirs_only_in_the_callers_datasets():
    marks = _marks(hashes={EM})
    assert marks.holds(json.dumps({"user_data": {"em": [EM]}, "route": {"dataset": "acme"}}))
    assert not marks.holds(json.dumps({"user_data": {"em": [EM]}, "route": {"dataset": "brandb"}}))
    assert marks.holds(json.dumps({"event": {"em": [EM]}, "dataset_id": "1001"}))
    assert not marks.holds(json.dumps({"event": {"em": [EM]}, "dataset_id": "2001"}))
    assert marks.holds(f"leadrelay:profile-by:acme:em:{EM}", f"leadrelay:profile-by:acme:em:{EM}")
    assert not marks.holds(f"leadrelay:profile-by:brandb:em:{EM}", f"leadrelay:profile-by:brandb:em:{EM}")
    assert not marks.holds(json.dumps({"em": [EM]}))  # names no dataset: the environment's, not Acme's


def test_a_stage_of_a_lead_never_had_is_found_by_its_hashs_first_half():
    marks = _marks(hashes={EM}, scope={"default"})
    assert marks.holds(f"leadrelay:stage:crm:{EM[:32]}:Purchase")


def test_an_id_from_a_profile_of_theirs_is_theirs_whatever_the_record_names():
    marks = _marks(owned={"7700000000000001"})
    assert marks.holds(json.dumps({"leadgen_id": "7700000000000001", "route": {"dataset": "brandb"}}))
