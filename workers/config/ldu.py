"""Limited Data Use: Meta's `data_processing_options` for users under US state privacy laws.

Notes: docs/internals/config.md
"""

from __future__ import annotations

OPTIONS = "data_processing_options"
COUNTRY = "data_processing_options_country"
STATE = "data_processing_options_state"
COUNTRIES = (0, 1)  # geolocate, USA
STATES = (0, 1000)  # geolocate, California


class BadLdu(ValueError):
    """An LDU setting Meta would refuse; the message says what is allowed."""


def fields(value) -> dict | None:
    """The event fields for an `ldu` setting, or None when it is not set.

    Raises:
        BadLdu: not true, false or a table of country and state.
    """
    if value is None:
        return None
    if value is False:
        return {OPTIONS: []}
    if value is True:
        return _checked(0, 0)
    if isinstance(value, dict) and set(value) <= {"country", "state"}:
        return _checked(value.get("country", 0), value.get("state", 0))
    raise BadLdu("must be true, false or {country = 1, state = 1000}")


def from_item(item: dict) -> dict | None:
    """LDU fields from a stage item: `ldu`, or Meta's own three fields.

    Raises:
        BadLdu: a value Meta would refuse.
    """
    if "ldu" in item:
        return fields(item["ldu"])
    if OPTIONS not in item:
        return None
    options = item[OPTIONS]
    if options == []:
        return {OPTIONS: []}
    if options != ["LDU"]:
        raise BadLdu(f'{OPTIONS} must be ["LDU"] or []')
    return _checked(item.get(COUNTRY, 0), item.get(STATE, 0))


def _checked(country, state) -> dict:
    if type(country) is not int or country not in COUNTRIES:
        raise BadLdu(f"country must be 0 (geolocate) or 1 (USA), got {country!r}")
    if type(state) is not int or state not in STATES:
        raise BadLdu(f"state must be 0 (geolocate) or 1000 (California), got {state!r}")
    return {OPTIONS: ["LDU"], COUNTRY: country, STATE: state}
