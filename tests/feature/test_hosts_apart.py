"""Hosts apart: six hosts in network namespaces this test makes (Redis, Meta, two web,
two worker), one worker host's link cut mid-batch, one web host cut from Redis while it is
posted to, Redis restarted, leads flowing all along. Nothing acknowledged is lost, a lead
delivered twice carries the same event_id, and no web or worker process exits on its own.
bench/netsoak.py is the same with 60 s cuts and prints the takeover time."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("ip"), reason="network namespaces need root and iproute2"
)


def test_cut_links_and_a_redis_restart_lose_nothing_acknowledged():
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "netsoak.py"), "--cut-seconds", "5", "--web-cut-seconds", "5"]
        + ["--retry-base-seconds", "1", "--posters", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    assert figures["acknowledged"] > 0 and figures["in_flight_at_cut"] >= 0
    assert figures["lost"] == 0
    assert figures["other_event_id"] == 0
    assert figures["exited"] == []
