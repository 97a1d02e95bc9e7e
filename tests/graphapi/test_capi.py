"""What every Conversions API request carries besides its events."""

import time

from helpers import leadgen_body
from workers.graphapi import capi


def test_every_request_names_leadrelay_and_its_version_as_partner_agent(graph, post_meta, work):
    graph.add_lead("8900000000000001")
    post_meta(leadgen_body("8900000000000001", created_time=int(time.time())))
    work()
    [request] = graph.calls("events")
    assert request["body"]["partner_agent"] == capi.PARTNER_AGENT == "leadrelay-0.1.0"
