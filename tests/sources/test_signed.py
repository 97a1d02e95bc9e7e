"""Standard Webhooks on its own: the spec's signature, rotation, the window, the id."""

import base64
import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workers.common.refusals import BadSignature, MalformedBody
from workers.sources import signed

SECRET = "whsec_" + base64.b64encode(b"a-shared-secret-32-bytes-long!!").decode()


def test_the_signature_is_the_specs():
    """v1,base64(HMAC-SHA256(base64-decoded secret, id.timestamp.body))."""
    key = base64.b64decode(SECRET.removeprefix("whsec_"))
    digest = hmac.new(key, b"msg_1.1795000000.{}", hashlib.sha256).digest()
    assert signed.signature(SECRET, "msg_1", "1795000000", b"{}") == "v1," + base64.b64encode(digest).decode()


def test_any_one_of_several_signatures_verifies():
    headers = signed.sign(SECRET, b"{}")
    headers["webhook-signature"] = "v1,bm90IGl0 " + headers["webhook-signature"]
    signed.verify(b"{}", headers, ["whsec_b3RoZXI=", SECRET])


def test_a_stale_timestamp_is_refused():
    with pytest.raises(BadSignature) as refused:
        signed.verify(b"{}", signed.sign(SECRET, b"{}", now=0), [SECRET])
    assert refused.value.reason == "stale_timestamp"


def test_a_webhook_id_that_cannot_be_a_key_is_malformed():
    with pytest.raises(MalformedBody):
        signed.parse(b"{}", {"webhook-id": "a/b", "webhook-timestamp": "1"})


@given(st.text(max_size=30))
def test_a_whole_number_is_read_from_ascii_digits_only_or_not_at_all(text):
    from workers.sources.ids import unsigned

    read = unsigned(text)
    plain = text.strip()
    if plain and len(plain) <= 19 and all("0" <= c <= "9" for c in plain):
        assert read == int(plain)
    else:
        assert read is None
