"""The readiness report as Prometheus series (workers/reports/readiness.py): Meta's gates per
dataset, each stage's share and median days, each stage source's lag, silence and last post,
and the Graph API version's days left.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

import json

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from workers.common import counters
from workers.common.queues import redis_key
from workers.events import accuracyrollup, stagelag
from workers.reports import readiness

SLOW = redis_key("scrape", "slow-figures")
SLOW_SECONDS = 60


def slow_figures(connection, routes, settings) -> dict:
    """The accuracy report per Page and the readiness report, at most a minute old."""
    kept = connection.get(SLOW)
    if kept:
        return json.loads(kept)
    found = {
        "pages": accuracyrollup.pages(connection, routes),  # at most 50 Pages by name
        "readiness": readiness.report(connection, routes, settings),
    }
    connection.set(SLOW, json.dumps(found), ex=SLOW_SECONDS)
    return found


def families(report: dict, values: dict):
    """`report` is readiness.report(); `values` is counters.read() (the lag's buckets)."""
    gate = GaugeMetricFamily(
        "leadrelay_readiness_gate",
        "1 when a dataset passes one of Meta's Conversion Leads gates (leads_30d, lead_coverage, "
        "funnel_stages, optimisation_stage, daily_upload), 0 when it fails.",
        labels=["dataset", "gate"],
    )
    figure = GaugeMetricFamily(
        "leadrelay_readiness_figure",
        "Each gate's figure: leads, coverage ratio, stage count, best stage share, seconds since the last upload.",
        labels=["dataset", "gate"],
    )
    share = GaugeMetricFamily(
        "leadrelay_readiness_stage_share",
        "Share of the last 30 days' leads that reached each stage within 28 days (Meta wants 1-40%).",
        labels=["dataset", "event_name"],
    )
    median = GaugeMetricFamily(
        "leadrelay_readiness_stage_median_days",
        "Median days from a lead to each stage, for the leads that reached it within 28 days.",
        labels=["dataset", "event_name"],
    )
    for dataset in report["datasets"]:
        for judged in dataset["gates"]:
            gate.add_metric([dataset["dataset"], judged["name"]], 1 if judged["passed"] else 0)
            if judged["value"] is not None:
                figure.add_metric([dataset["dataset"], judged["name"]], judged["value"])
        for stage in dataset["stages"]:
            if stage["share"] is not None:
                share.add_metric([dataset["dataset"], stage["event_name"]], stage["share"])
            if stage["median_days"] is not None:
                median.add_metric([dataset["dataset"], stage["event_name"]], stage["median_days"])
    yield from (gate, figure, share, median)
    yield from _sources(report["sources"], values)
    days = GaugeMetricFamily(
        "leadrelay_api_version_days_left",
        "Days until Meta stops serving the configured API version (no sample: no end announced).",
        labels=["version"],
    )
    if report["api_version"]["days_left"] is not None:
        days.add_metric([report["api_version"]["version"]], report["api_version"]["days_left"])
    yield days


def _sources(sources: list[dict], values: dict):
    lag = HistogramMetricFamily(stagelag.LAG.name, stagelag.LAG.doc, labels=["source"])
    near = CounterMetricFamily(stagelag.NEAR_EDGE.name, stagelag.NEAR_EDGE.doc, labels=["source"])
    late = CounterMetricFamily(stagelag.TOO_LATE.name, stagelag.TOO_LATE.doc, labels=["source"])
    last = GaugeMetricFamily(
        "leadrelay_stage_source_last_post_timestamp_seconds", "When each stage source last posted.", labels=["source"]
    )
    silent = GaugeMetricFamily(
        "leadrelay_stage_source_silent",
        "1 for a stage source that posted before and fell silent while leads keep coming.",
        labels=["source"],
    )
    for source in sources:
        name = source["source"]
        lag.add_metric([name], *counters.cumulative(values, stagelag.LAG, (name,), stagelag.BUCKETS))
        near.add_metric([name], source["near_edge"])
        late.add_metric([name], source["too_late"])
        if source["last_post"]:
            last.add_metric([name], source["last_post"])
        silent.add_metric([name], 1 if source["silent"] else 0)
    yield from (lag, near, late, last, silent)
