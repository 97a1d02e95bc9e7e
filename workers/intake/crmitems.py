"""A CRM's, booking tool's or signing tool's stage changes as the receiver takes them.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

from workers.config import crmmap
from workers.config.routing import Client, Routes
from workers.identity import userdata
from workers.sources.registry import Source


def jobs(
    source: Source, items: list[dict], table: dict, region: str, owner: Client | None, routes: Routes
) -> tuple[list[tuple[str, dict]], list[dict]]:
    """A CRM's stage changes to (event key, job argument), each with the stage its id is
    mapped to and whose it is; a stage id the table does not map is not sent, recorded
    with the id (crmmap.py), and so is an account the signer may not reach (`_whose`)."""
    jobs, not_sent = [], []
    for item in items:
        if "doc" in item:  # a generic sender's body: the mapping file says where each part is
            item = _from_fields(item, table["fields"])
        stage = table["stages"].get(item["stage_id"])
        if stage is None and table.get("passthrough") and isinstance(item["stage_id"], str):
            stage = item["stage_id"]
        if stage is None:
            not_sent.append({"reason": "unmapped_stage", "stage_id": item["stage_id"], "event_key": item["event_key"]})
            continue
        whose, refused = _whose(table["accounts"].get(item["account"]), owner, routes)
        if refused:
            not_sent.append({"reason": refused, "account": str(item["account"])[:64], "event_key": item["event_key"]})
            continue
        if item.get("currency") is None and table.get("currency"):  # a CRM whose pushes name none (HighLevel)
            item = {**item, "currency": table["currency"]}
        if "person" in item:  # hashed on arrival, as form answers are: no raw email waits in Redis
            item = {**item, "person": _hashed_person(item["person"], region)}
        jobs.append((source.lead_key(item), {**item, "stage": stage, **whose}))
    return jobs, not_sent


def _whose(dataset: str | None, owner: Client | None, routes: Routes) -> tuple[dict, str | None]:
    """Whose a change is, decided by the secret that signed it, never by the account its
    body names: ({"dataset"} for a listed account, {"client"} for a client's unlisted
    one, {} for the operator's in a one-client install), or why it goes nowhere:
    `account_out_of_scope` (listed, but another client's), `unknown_account` (listed
    nowhere, signed with the operator's secret while several clients share the install)."""
    if owner is not None:
        if dataset is not None and dataset not in owner.datasets:
            return {}, "account_out_of_scope"
        return ({"dataset": dataset} if dataset else {"client": owner.name}), None
    if dataset is None and routes.several_clients:
        return {}, "unknown_account"
    return ({"dataset": dataset} if dataset else {}), None


def _hashed_person(person: dict, region: str) -> dict:
    """The person a booking or a signed body carried, as hashes only (the stage check takes
    hashes as they are); names are not kept: a stage event matches by email and phone."""
    hashed, _ = userdata.build({"em": person.get("email") or [], "ph": person.get("phone") or []}, region)
    kept = {k: person.get(k) for k in ("value", "currency", "fbclid") if person.get(k) is not None}
    return {"email": hashed.get("em", []), "phone": hashed.get("ph", []), **kept}


def _from_fields(item: dict, fields: dict) -> dict:
    """A Standard Webhooks body read through `[crm.signed.fields]` into a stage change."""
    found = crmmap.extract(fields, item["doc"])
    person = {
        key: [v for v in (found[key] if isinstance(found[key], list) else [found[key]]) if isinstance(v, str)]
        for key in ("email", "phone")
    }
    stage = found["stage"] if isinstance(found["stage"], str) and found["stage"].strip() else None
    return {
        **{k: v for k, v in item.items() if k not in ("doc", "sent_at")},
        "stage_id": stage,
        "occurred_at": found["occurred_at"] if found["occurred_at"] is not None else item.get("sent_at"),
        "person": {**person, "value": found["value"], "currency": found["currency"]},
        **({"leadgen_id": str(found["leadgen_id"])} if isinstance(found["leadgen_id"], (str, int)) else {}),
    }
