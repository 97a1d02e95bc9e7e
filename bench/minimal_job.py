"""The reference for bench/pipeline.py: the least an RQ job can do for one lead, one
lead read and one event send, with nothing of leadrelay's (no hashing, no ledger,
no retries)."""

import os

import requests

_session = requests.Session()


def relay(leadgen_id: str) -> None:
    base = f"{os.environ['META_GRAPH_URL']}/v26.0"
    lead = _session.get(
        f"{base}/{leadgen_id}",
        params={"fields": "id,created_time,field_data"},
        headers={"Authorization": f"Bearer {os.environ['META_PAGE_ACCESS_TOKEN']}"},
        timeout=10,
    ).json()
    event = {
        "event_name": "Lead",
        "event_time": 0,
        "action_source": "system_generated",
        "event_id": f"meta:{leadgen_id}:Lead",
        "user_data": {"lead_id": int(lead["id"])},
    }
    _session.post(
        f"{base}/{os.environ['META_DATASET_ID']}/events",
        json={"data": [event]},
        headers={"Authorization": f"Bearer {os.environ['META_CAPI_ACCESS_TOKEN']}"},
        timeout=10,
    )


def relay_batch(leadgen_ids: list[str]) -> None:
    base = f"{os.environ['META_GRAPH_URL']}/v26.0"
    answers = _session.post(
        f"{base}/",
        json={
            "batch": [{"method": "GET", "relative_url": f"{i}?fields=id,created_time,field_data"} for i in leadgen_ids]
        },
        headers={"Authorization": f"Bearer {os.environ['META_PAGE_ACCESS_TOKEN']}"},
        timeout=10,
    ).json()
    events = [
        {
            "event_name": "Lead",
            "event_time": 0,
            "action_source": "system_generated",
            "event_id": f"meta:{leadgen_id}:Lead",
            "user_data": {"lead_id": int(leadgen_id)},
        }
        for leadgen_id, answer in zip(leadgen_ids, answers)
        if answer and answer.get("code") == 200
    ]
    _session.post(
        f"{base}/{os.environ['META_DATASET_ID']}/events",
        json={"data": events},
        headers={"Authorization": f"Bearer {os.environ['META_CAPI_ACCESS_TOKEN']}"},
        timeout=10,
    )
