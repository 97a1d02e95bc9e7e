"""The vendor contract in code: what every source module provides (`Vendor`), and what one
may declare (`Traits`), read here and nowhere else. docs/sources.md says what each means."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Mapping, NotRequired, Protocol, TypedDict, runtime_checkable


@runtime_checkable
class Vendor(Protocol):
    """A source module: its name, how its deliveries authenticate, what they say."""

    NAME: str

    def verify(self, body: bytes, headers: Mapping[str, str], secrets, *args, **kwargs) -> None: ...

    def sign(self, secret: str, body: bytes, url: str = "") -> dict[str, str]: ...

    def parse(self, body: bytes, *args) -> dict: ...

    def lead_key(self, item: dict) -> str: ...


class StageChange(TypedDict):
    """One change a stage source's parse reads (crmitems.py maps it to a stage)."""

    event_key: str  # the change's own id: its job id and dedupe
    object: str  # what moved: "deal", "opportunity", "booking"...
    object_id: str
    account: str  # the vendor account it came from (routing; a client's secret reaches its own)
    stage_id: str
    occurred_at: int | None  # Unix seconds, when the vendor says


class PersonReadBack(TypedDict, total=False):
    """What a CRM client's `read` answers for one change: the person, and the deal's value."""

    email: list[str]
    phone: list[str]
    first_name: str | None
    last_name: str | None
    country: str | None
    fbc: str | None  # a click id the CRM recorded (HighLevel's attribution)
    value: float | None
    currency: str | None
    candidates: list["PersonReadBack"]  # several people on one deal (HubSpot): the one who is a lead gets the stage


class StageParse(TypedDict):
    """What a stage source's parse returns."""

    items: list[dict]  # StageChange, with what else the vendor names (person, amount, currency)
    skipped: list[dict]  # acknowledged and answered, not recorded (another event, another object)
    recorded: NotRequired[list[dict]]  # acknowledged and kept for `leadrelay ignored` (a cancelled booking)


@dataclass(frozen=True)
class Traits:
    """What a source module may declare beyond the contract, each with its default."""

    default_stages: Mapping[str, str] | None = None  # stage ids that mean the same in every account
    sandbox_stages: Mapping[str, str] | None = None  # the sandbox stand-in's pipeline, mapped with no table
    names_no_currency: bool = False  # its amounts carry no currency (the sandbox says USD)
    secret_shape: str = ""  # "user:pass" (Basic credentials), "public key", "hex" (a key given as hex)
    oauth_token_path: str = ""  # it can take OAuth client credentials instead of a token
    unavailable_status: int | None = None  # what it retries on (HighLevel: 429, not 503)
    parses_headers: bool = False  # its parse reads headers (an idempotency key in a header)
    sign_body: Callable | None = None  # it puts its token in the body: sign_body(secret, body, url)
    acknowledge: Callable | None = None  # it waits for an answer of its own (Salesforce's SOAP Ack)

    @classmethod
    def of(cls, module: ModuleType) -> "Traits":
        """The module's declarations: the only place they are looked up by name."""
        return cls(
            default_stages=getattr(module, "DEFAULT_STAGES", None) or None,
            sandbox_stages=getattr(module, "SANDBOX_STAGES", None) or None,
            names_no_currency=bool(getattr(module, "NAMES_NO_CURRENCY", False)),
            secret_shape=getattr(module, "SECRET_SHAPE", ""),
            oauth_token_path=getattr(module, "OAUTH_TOKEN_PATH", ""),
            unavailable_status=getattr(module, "UNAVAILABLE_STATUS", None),
            parses_headers=bool(getattr(module, "PARSES_HEADERS", False)),
            sign_body=getattr(module, "sign_body", None),
            acknowledge=getattr(module, "acknowledge", None),
        )
