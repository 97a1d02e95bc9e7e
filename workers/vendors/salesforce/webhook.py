"""Salesforce Outbound Messages: a Flow or workflow rule on an Opportunity's or a Lead's stage
sends a SOAP message of up to 100 notifications, each the record's latest state.

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

from typing import Mapping, Sequence
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from workers.common import jsonbody
from workers.common.refusals import BadSignature, MalformedBody
from workers.common.times import unix_time
from workers.sources.ids import tool_id
from workers.sources.signing import matches_any

NAME = "salesforce"
API_URL = "https://login.salesforce.com"  # SALESFORCE_API_URL: your instance (https://acme.my.salesforce.com)
# Its read-back token may be issued from a connected app's client credentials (client.py).
OAUTH_TOKEN_PATH = "/services/oauth2/token"
SIGNATURE_HEADER = "X-Leadrelay-Path-Token"  # the endpoint's secret path segment, as the route passes it on
SECRET_SHAPE = "user:pass"  # `<organization id>:<token>`
MAX_NOTIFICATIONS = 100
# Salesforce's default Opportunity stage for a win (orgs may rename it: the table maps others).
DEFAULT_STAGES = {"Closed Won": "Purchase"}
SANDBOX_STAGES = {"Qualification": "QualifiedLead"}  # the stand-in's (standin.py)
NAMES_NO_CURRENCY = True  # CurrencyIsoCode only with multiple currencies: `[crm.salesforce] currency`
_OM = "{http://soap.sforce.com/2005/09/outbound}"
_SOAP = "{http://schemas.xmlsoap.org/soap/envelope/}"
REFUSED = "the endpoint's token, or the message's organization, is not one SALESFORCE_OUTBOUND_SECRET names"
_SF = "{urn:sobject.enterprise.soap.sforce.com}"
_XSI_TYPE = "{http://www.w3.org/2001/XMLSchema-instance}type"
# The stage field of each object an outbound message may carry.
STAGE_FIELDS = {"Opportunity": "StageName", "Lead": "Status"}
ACK = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>'
    b'<notificationsResponse xmlns="http://soap.sforce.com/2005/09/outbound"><Ack>true</Ack>'
    b"</notificationsResponse></soapenv:Body></soapenv:Envelope>"
)


def sign(secret: str, body: bytes, url: str = "") -> dict[str, str]:
    """What a sender's endpoint carries: the secret's token (in the path, passed on as a header)."""
    return {SIGNATURE_HEADER: secret.rpartition(":")[2]}


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str]) -> None:
    """The endpoint's token, then the message's organization.

    Raises:
        BadSignature: `missing_signature` (no token), `bad_signature` (a wrong token, or
            an organization no secret names).
        MalformedBody: a body refused before any work (a DTD, entities: `forbidden_xml`).
    """
    given = headers.get(SIGNATURE_HEADER) or ""  # exactly: the token is the secret itself, not a digest of it
    if not given.strip():
        raise BadSignature(
            "post to /webhooks/salesforce/<token>: the endpoint's token is missing", reason="missing_signature"
        )
    owners = [s for s in secrets if matches_any([s.rpartition(":")[2]], given)]
    if not owners:
        raise BadSignature(REFUSED)
    orgs = [account_id(s.rpartition(":")[0]) for s in owners if ":" in s]
    if not orgs:
        return  # a token alone: no organization is checked (docs/salesforce.md says to give it)
    try:
        root = _root(body)
    except MalformedBody as err:
        if err.reason == "forbidden_xml":
            raise
        return  # not XML at all: parse answers 400 for it
    # The same element parse routes by: the message's own, never one elsewhere in the envelope.
    if not matches_any(orgs, _organization(_message(root))):
        raise BadSignature(REFUSED)  # the same words as a wrong token: neither tells which was right


def account_id(text: str) -> str:
    """An organization id in its 15-character form: Salesforce sends 18, people copy 15 (the
    3 more encode the case of the 15, which are compared case-sensitively)."""
    return text.strip()[:15]


def _message(root):
    return root.find(f"./{_SOAP}Body/{_OM}notifications")


def _organization(message) -> str:
    return account_id(message.findtext(f"{_OM}OrganizationId") or "") if message is not None else ""


def _root(body: bytes):
    try:
        return fromstring(body, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException:
        raise MalformedBody("a DTD, entity or external reference: refused", reason="forbidden_xml") from None
    except (ParseError, ValueError, LookupError):  # LookupError: an encoding Python does not know
        jsonbody.load(body)  # not JSON either: malformed_json (deep nesting included), as every source says
        raise MalformedBody("JSON where a SOAP message is expected", reason="unexpected_shape") from None


def parse(body: bytes) -> dict:
    """Each notification's record as a stage change; one whose object has no stage field
    we read, or no stage, is skipped with why.

    Raises:
        MalformedBody: not XML (`malformed_json`, as every source names an unreadable
            body), not an outbound message (`unexpected_shape`), over 100 notifications.
    """
    message = _message(_root(body))
    if message is None:
        raise MalformedBody("expected a SOAP `notifications` message", reason="unexpected_shape")
    notifications = message.findall(f"{_OM}Notification")
    if len(notifications) > MAX_NOTIFICATIONS:
        raise MalformedBody(f"at most {MAX_NOTIFICATIONS} notifications per message", reason="too_many_items")
    org = _organization(message)
    items: list[dict] = []
    skipped: list[dict] = []
    for notification in notifications:
        item = _item(notification, org)
        (items if "reason" not in item else skipped).append(item)
    return {"items": items, "skipped": skipped}


def _item(notification, org: str) -> dict:
    key = tool_id((notification.findtext(f"{_OM}Id") or "").strip())
    record = notification.find(f"{_OM}sObject")
    if key is None or record is None:
        return {"reason": "notification_without_record"}
    kind = (record.get(_XSI_TYPE) or "").rpartition(":")[2]
    field = STAGE_FIELDS.get(kind)
    if field is None:
        return {"reason": "not_a_stage_object", "object": kind[:40], "event_key": key}

    def text(name: str) -> str | None:
        value = (record.findtext(f"{_SF}{name}") or "").strip()
        return value or None

    stage, record_id = text(field), tool_id(text("Id"))
    if stage is None or record_id is None:
        return {"reason": "no_stage", "event_key": key}
    amount = text("Amount")
    try:
        value = float(amount) if amount else None
    except ValueError:
        value = None
    item = {
        "crm": NAME,
        "event_key": key,
        "object": kind.lower(),
        "object_id": record_id,
        "account": org,
        "stage_id": stage,
        "value": value if value and value > 0 else None,
        "currency": text("CurrencyIsoCode"),
        # The record's last change: the envelope has no time of its own (ask for LastModifiedDate).
        "occurred_at": unix_time(text("LastModifiedDate")),
    }
    email, phone = text("Email"), text("Phone") or text("MobilePhone")
    if email or phone:  # a Lead's own fields: nothing to read back
        item["person"] = {
            "email": [email] if email else [],
            "phone": [phone] if phone else [],
            "value": item["value"],
            "currency": item["currency"],
        }
    return item


def acknowledge(counts: dict) -> tuple[bytes, str]:
    """The SOAP answer Salesforce waits for: every notification of the message is stored."""
    return ACK, "text/xml"


def lead_key(item: dict) -> str:
    """The notification's id: a redelivery carries it again."""
    return item["event_key"]
