"""deploy/grafana/leadrelay.json: every panel's query names only series /metrics serves, so
a renamed metric cannot leave a dashboard panel silently empty."""

import json
import re

from prometheus_client.parser import text_string_to_metric_families

from helpers import ROOT, leadgen_body

DASHBOARD = ROOT / "deploy" / "grafana" / "leadrelay.json"


def _served(text: str) -> set[str]:
    names = set()
    for family in text_string_to_metric_families(text):
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
    return names | {f"{name}_total" for name in names} | {f"{name}_bucket" for name in names}


def test_every_panel_queries_series_the_metrics_endpoint_serves(client, graph, post_meta, work):
    graph.add_lead("1234567890123456")
    post_meta(leadgen_body("1234567890123456"))
    work()
    served = _served(client.get("/metrics").get_data(as_text=True))
    dashboard = json.loads(DASHBOARD.read_text())
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    asked = {
        (panel["title"], name)
        for panel in panels
        for target in panel["targets"]
        for name in re.findall(r"leadrelay_[a-z0-9_]+", target["expr"])
    }
    assert asked and {name for _, name in asked} - served == set(), sorted(asked)
    rows = [p["title"] for p in dashboard["panels"] if p["type"] == "row"]
    assert rows == [
        "Are leads arriving?",
        "Are they reaching Meta?",
        "What is waiting or dead?",
        "Are tokens, Redis and Meta's version healthy?",
    ]
