"""Bearer-token guard for the admin and stage-events APIs: off when the token is unset."""

from __future__ import annotations

from flask import request

from workers.common.refusals import ReceiverError
from workers.sources.signing import matches_any

from . import guard


class Disabled(ReceiverError):
    status = 404


class NotAuthorised(ReceiverError):
    status = 401


def check(token: str, setting: str, name: str) -> None:
    """Let the request through only with `Authorization: Bearer <token>`.

    Raises:
        Disabled: `<name>_disabled` (404) when the token is not configured.
        NotAuthorised: `bad_<name>_token` (401) when missing or wrong (constant-time compare).
        Throttled: `too_many_attempts` (429) for a wrong token after too many from this
            address (the right one always passes).
    """
    identify({name: token}, setting, name)


def identify(tokens: dict[str, str], setting: str, name: str) -> str:
    """Whose bearer token this request carries, among `tokens` (who -> token); every one
    is compared, in constant time. Raises as `check` does; disabled when none is set."""
    tokens = {who: token for who, token in tokens.items() if token}
    if not tokens:
        raise Disabled(f"set {setting} to enable this API", reason=f"{name}_disabled")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    found = None
    for who, token in tokens.items():
        if matches_any([token], given.strip()):
            found = who
    if scheme.lower() != "bearer" or found is None:
        guard.wrong_token(name)
        raise NotAuthorised(f"Authorization: Bearer <{setting}> required", reason=f"bad_{name}_token")
    return found
