"""The sandbox's `leadrelay send-test salesforce`.

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import secrets
import time

import requests

from workers.run import crmsamples
from workers.run.sendtest import answer_of


def send(settings, web: str, name: str, leadgen_id: str) -> dict:
    return crmsamples.crm_stages(settings, web, name, leadgen_id, bodies, post=_post)


def bodies(made: dict, now: int) -> list[str]:
    org = "{org}"  # the sandbox's organization id, filled in by _post from its secret
    first = message(org, made["opportunity_id"], "Qualification", now)
    won = message(org, made["opportunity_id"], "Closed Won", now + 1)
    return [first, first, won, won]


def _post(settings, web: str, name: str, body: str) -> tuple[int, dict]:
    org, _, token = settings.source_secrets[name][0].rpartition(":")
    response = requests.post(
        f"{web}/webhooks/{name}/{token}",
        data=body.replace("{org}", org).encode(),
        headers={"Content-Type": "text/xml; charset=utf-8", "SOAPAction": '""'},
        timeout=10,
    )
    return response.status_code, answer_of(response) if response.headers.get("Content-Type", "").startswith(
        "application/json"
    ) else {"text": response.text[:200]}


def message(org: str, opportunity: str, stage: str, when: int) -> str:
    """One Outbound Message of one notification, as Salesforce sends it for an Opportunity."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(when))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
        'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        "<soapenv:Body>"
        '<notifications xmlns="http://soap.sforce.com/2005/09/outbound">'
        f"<OrganizationId>{org}</OrganizationId><ActionId>04k5g000000SANDBOX</ActionId>"
        '<SessionId xsi:nil="true"/>'
        "<EnterpriseUrl>https://sandbox.my.salesforce.com/services/Soap/c/62.0/00D</EnterpriseUrl>"
        "<PartnerUrl>https://sandbox.my.salesforce.com/services/Soap/u/62.0/00D</PartnerUrl>"
        f"<Notification><Id>04l5g{secrets.token_hex(5)}</Id>"
        '<sObject xsi:type="sf:Opportunity" xmlns:sf="urn:sobject.enterprise.soap.sforce.com">'
        f"<sf:Id>{opportunity}</sf:Id><sf:Amount>1200.0</sf:Amount><sf:LastModifiedDate>{stamp}</sf:LastModifiedDate>"
        f"<sf:StageName>{stage}</sf:StageName></sObject></Notification>"
        "</notifications></soapenv:Body></soapenv:Envelope>"
    )
