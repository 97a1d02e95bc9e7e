"""`leadrelay doctor`'s checks of a Google destination: the service account gets a token,
and Google validates one conversion per conversion action (`validateOnly`: nothing is
uploaded), which says whether each action exists, is `UPLOAD_CLICKS`, and whether the
account takes conversions (access, the terms, enhanced conversions for leads).

Notes: docs/internals/googleapi.md
"""

from __future__ import annotations

from typing import NamedTuple

from workers.common.policy import JobError, Paused
from workers.config.googledest import GoogleDestination
from workers.googleapi.datamanager import INGEST, SETTING, DataManager, validation

# Google's reasons about a conversion action, and what a person does.
ACTION_FIXES = {
    "INVALID_CONVERSION_ACTION_ID": "create it in Google Ads (Goals > Conversions > New > Import > CRM, files "
    "or other data sources > Track conversions from clicks) or fix its id in the mapping file",
    "INVALID_CONVERSION_ACTION_TYPE": "it must be an import of clicks (UPLOAD_CLICKS): make one of that type",
    "INVALID_DESTINATION": "check operating_account (the account that owns the action) and login_account",
}


class Found(NamedTuple):
    name: str
    ok: bool
    detail: str
    fix: str = ""


def run(client: DataManager | None, destination: GoogleDestination) -> list[Found]:
    """The destination's checks, each with its fix when it failed."""
    actions = ", ".join(f"{event} {action}" for event, action in sorted(destination.conversion_actions.items()))
    said = [Found("google destination", True, f"{destination.key}: account {destination.operating_account}, {actions}")]
    if destination.dry_run or client is None:
        kept = f"{SETTING} is not set: Google's events are kept (dry run), not sent"
        return said + [Found("google credentials", True, kept)]
    try:
        client.probe_token()
    except JobError as err:
        return said + [Found("google credentials", False, err.detail, err.fix or "")]
    checks = said + [Found("google credentials", True, f"a token for the Data Manager API ({SETTING})")]
    for event_name, action in sorted(destination.conversion_actions.items()):
        checks.append(_action(client, destination, event_name, action))
    return checks


def _action(client: DataManager, destination: GoogleDestination, event_name: str, action: str) -> Found:
    name = f"google conversion action {event_name}"
    try:
        client.call("POST", INGEST, json=validation(destination, action), probe=True)
    except Paused as err:
        return Found(name, False, str(err), "fix what paused it (`leadrelay failures`), then `leadrelay resume`")
    except JobError as err:
        fix = next((f for reason, f in ACTION_FIXES.items() if reason in err.detail), err.fix or "")
        return Found(name, False, f"{action} in {destination.operating_account}: {err.detail}", fix)
    return Found(name, True, f"{action} in {destination.operating_account} takes conversions")
