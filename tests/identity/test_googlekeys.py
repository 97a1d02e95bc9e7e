"""Google's match keys (workers/identity/googlekeys.py) against Google's own examples and
Google's own formatter (google-ads-datamanager-util, the Data Manager API's utility
library): the same normalised text and the same hash for every address and international
number they both read; a national number gets its country's code, which Google's formatter
leaves to the caller; and never Meta's hash."""

from __future__ import annotations

import phonenumbers
import pytest
from google.ads.datamanager_util import Encoding, Formatter
from hypothesis import given
from hypothesis import strategies as st

from workers.identity import emails, googlekeys, phones
from workers.identity.userdata import hash_value

GOOGLE = Formatter()

# https://developers.google.com/data-manager/api/devguides/concepts/formatting
DOCUMENTED = [
    ("email", "cloudy.sanfrancisco+shopping@gmail.com", "cloudysanfrancisco@gmail.com"),
    ("email", "user.name+NYC@Example.com", "user.name+nyc@example.com"),
    ("phone", "(800)555-0100", "+18005550100"),
    ("email", "Jane.Doe @Example.com", "jane.doe@example.com"),  # "intermediate whitespace" removed
]


@pytest.mark.parametrize("kind, given_value, wanted", DOCUMENTED)
def test_googles_documented_examples(kind, given_value, wanted):
    read = googlekeys.email(given_value) if kind == "email" else googlekeys.phone(given_value, ("US",))
    assert read == wanted


_SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+_-", min_size=1, max_size=8)
_DOMAINS = ["gmail.com", "GMail.com", "googlemail.com", "example.com", "Example.COM", "mail.example.org"]


@given(
    segments=st.lists(_SEGMENT, min_size=1, max_size=4),
    domain=st.sampled_from(_DOMAINS),
    space=st.sampled_from(["", " ", "\t", "  "]),
)
def test_an_address_reads_and_hashes_as_googles_formatter_reads_it(segments, domain, space):
    value = f"{space}{'.'.join(segments)}@{domain}{space}"
    try:
        ours = googlekeys.email(value)
    except emails.NotAnEmail:  # `+x@gmail.com`: nothing left before the tag, which Google refuses too
        with pytest.raises(ValueError):
            GOOGLE.format_email_address(value)
        return
    assert ours == GOOGLE.format_email_address(value)
    assert googlekeys.hashed(ours) == GOOGLE.process_email_address(value, Encoding.HEX)


_REGIONS = sorted(phonenumbers.SUPPORTED_REGIONS)


@given(region=st.sampled_from(_REGIONS), style=st.sampled_from(["INTERNATIONAL", "E164", "RFC3966"]))
def test_an_international_number_reads_and_hashes_as_googles_formatter_reads_it(region, style):
    example = phonenumbers.example_number(region)
    if example is None:
        return
    value = phonenumbers.format_number(example, getattr(phonenumbers.PhoneNumberFormat, style))
    ours = googlekeys.phone(value, (region,))
    assert ours == GOOGLE.format_phone_number(value)
    assert googlekeys.hashed(ours) == GOOGLE.process_phone_number(value, Encoding.HEX)


def test_a_national_number_gets_its_countrys_code_which_googles_formatter_leaves_to_us():
    assert GOOGLE.format_phone_number("(800)555-0100") == "+8005550100"  # what the formatter alone gives
    assert googlekeys.phone("(800)555-0100", ("US",)) == "+18005550100"  # what Google's page asks for
    with pytest.raises(phones.NotAPhone):
        googlekeys.phone("555-0100", ("US",))


@pytest.mark.parametrize("value", ["a@example.com, b@example.com", "a@example.com b@example.com", "john @ smith"])
def test_two_addresses_or_none_stay_refused_with_their_spaces_gone(value):
    with pytest.raises(emails.NotAnEmail):
        googlekeys.email(value)


def test_a_google_hash_is_never_metas():
    phone, email = "+1 650 555 1234", "Cloudy.SanFrancisco@gmail.com"
    assert googlekeys.hashed(googlekeys.phone(phone, ("US",))) != hash_value("ph", phone, "US")
    assert googlekeys.hashed(googlekeys.email(email)) != hash_value("em", email, "US")
