"""A phone never changes country by guesswork: a number in national form (with its trunk
prefix) is read only in a region the lead, the form or the settings give."""

import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.identity.phones import NotAPhone, e164_digits

TYPES = (phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE)


def _national_forms() -> list[tuple[str, str, str]]:
    """(region, the number as its people write it, with the trunk prefix; its E.164 digits)
    for phonenumbers' example numbers of every region that has a trunk prefix."""
    out = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
        prefix = metadata.national_prefix if metadata else None
        if not prefix or prefix == "1":  # NANP's trunk 1 is its country code: no other country to land in
            continue
        for kind in TYPES:
            example = phonenumbers.example_number_for_type(region, kind)
            if example is not None:
                national = phonenumbers.national_significant_number(example)
                out.append((region, prefix + national, f"{example.country_code}{national}"))
    return out


FORMS = _national_forms()


def test_there_are_national_forms_to_check():
    assert len(FORMS) > 150  # about 120 regions with a trunk prefix, mobiles and fixed lines


@given(st.sampled_from(FORMS), st.sampled_from(["", "US", "GB", "DE", "BR"]))
def test_a_national_form_is_never_read_as_an_international_number(form, other):
    region, written, expected = form
    regions = (other,) if other and other != region else ()
    try:
        found = e164_digits(written, regions)
    except NotAPhone as err:
        assert err.reason in ("no_region_for_national", "invalid_phone")
        return
    # Read at all, it was read in a region given: its country code is that region's.
    assert regions and int(phonenumbers.parse("+" + found).country_code) in {
        phonenumbers.country_code_for_region(given_region) for given_region in regions
    }


@pytest.mark.parametrize(
    "written, regions, expected",
    [
        ("0532 123 45 67", ("TR",), "905321234567"),  # the lead's country given: read there
        ("0532 123 45 67", (), None),  # none given: dropped, not a Cuban +53 number
        ("8 (495) 123-45-67", (), None),  # Russia's trunk 8: not Vietnam's +84
        ("8 (495) 123-45-67", ("RU",), "74951234567"),
        ("447911123456", (), "447911123456"),  # a CRM's digits with their country code still read
        ("8613800138000", (), "8613800138000"),  # +86 stored without +: 8 is not a trunk prefix here
    ],
)
def test_national_forms_and_stored_country_codes(written, regions, expected):
    if expected is None:
        with pytest.raises(NotAPhone) as err:
            e164_digits(written, regions)
        assert err.value.reason == "no_region_for_national"
    else:
        assert e164_digits(written, regions) == expected


def _outcome(value: str, regions: tuple[str, ...]) -> str:
    try:
        return e164_digits(value, regions)
    except NotAPhone as err:
        return "!" + err.reason


@settings(max_examples=600, deadline=None)
@given(st.text(st.sampled_from("0123456789 +-().\t/"), max_size=22), st.sampled_from([(), ("US",), ("DE", "US")]))
def test_digits_and_separators_read_as_the_whole_reading_reads_them(value, regions):
    """The short path (digits and what people type between them) gives what the whole reading
    gives: a `*` sends the same text there, and is dropped with the other non-digits."""
    assert _outcome(value, regions) == _outcome(value + "*", regions)


@pytest.mark.parametrize(
    "written, region, digits",
    [
        ("tel:+46-8-12-34-56", "SE", "468123456"),  # RFC 3966, as a link prefills it (phonenumbers' own form)
        ("Phone: +44 20 7946 0958", "US", "442079460958"),  # a label before an international number
        ("Tel. 08-12 34 56", "SE", "468123456"),  # a label before a national one
    ],
)
def test_a_label_before_the_number_leaves_its_plus_read(written, region, digits):
    assert e164_digits(written, (region,)) == digits
