"""The Graph stand-in run alone, as docs/sources.md shows it: a lead read answers, and an
event posted to it is printed."""

from __future__ import annotations

import subprocess
import sys

import requests

from helpers import ROOT, kill_tree, wait_for
from workers.run.embedded_redis import free_port


def test_the_stand_in_runs_alone_and_answers_a_lead_read_and_an_event():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "workers.standin.server", "--port", str(port), "--any-lead"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert "Graph stand-in on" in process.stdout.readline()
        base = f"http://127.0.0.1:{port}"
        lead = requests.get(f"{base}/v27.0/1234567890123456", params={"fields": "field_data"}, timeout=5)
        assert lead.status_code == 200 and lead.json()["id"] == "1234567890123456", lead.text
        event = {"event_name": "Lead", "event_time": 1, "event_id": "e", "user_data": {"lead_id": 1}}
        sent = requests.post(f"{base}/v27.0/4242424242/events", json={"data": [event]}, timeout=5)
        assert sent.status_code == 200 and sent.json()["events_received"] == 1, sent.text
        wait_for(lambda: '"event_name": "Lead"' in process.stdout.readline(), what="the event printed")
    finally:
        kill_tree(process.pid)
        process.wait()
