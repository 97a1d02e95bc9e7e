"""GET /metrics: the receiver's own counters, and the workers' and queues' figures from Redis.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

import os

import redis
from flask import Blueprint, Response, current_app
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from rq import Worker

from workers.common import counters
from workers.common.queues import queue_status
from workers.config import redissafety
from workers.events import accuracy, personindex
from workers.failures import deadletters
from workers.graphapi.pauses import Pauses
from workers.reports import watched

from . import deliveries, readinessmetrics, tokenauth

bp = Blueprint("metrics", __name__)

# The web process's own counters live in webmetrics.py (the guard counts refusals there
# too, without importing this module, which needs the guard for /metrics' token).
from .webmetrics import _LOCAL, AUTH_REFUSED, STAGE_EVENTS, WEBHOOK_SECONDS, WEBHOOKS  # noqa: E402, F401


def _web_registry() -> CollectorRegistry:
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return _LOCAL
    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    return registry


class RedisCollector:
    """The installation-wide figures: worker counters, queues, dead letters, pauses."""

    def __init__(self, connection: redis.Redis, queue, routes, settings):
        self.connection = connection
        self.queue = queue
        self.routes, self.settings = routes, settings

    def collect(self):
        up = GaugeMetricFamily(
            "leadrelay_redis_up",
            "1 when this scrape could read Redis; without it the worker, queue and dead-letter figures are missing.",
        )
        try:
            families = list(self._families())
        except redis.RedisError:
            families = []
        up.add_metric([], 1 if families else 0)
        return [up, *families, *self._safety()]

    def _safety(self):
        """1 while Redis can lose what it acknowledged (workers/config/redissafety.py)."""
        try:
            found = redissafety.problems(self.connection)
        except redis.RedisError:
            return []
        unsafe = GaugeMetricFamily(
            "leadrelay_redis_unsafe",
            "1 while Redis can lose acknowledged leads (appendonly off, or an evicting maxmemory-policy).",
        )
        unsafe.add_metric([], 1 if found else 0)
        return [unsafe]

    def _families(self):
        values = counters.read(self.connection)
        for family in counters.COUNTERS:
            out = CounterMetricFamily(family.name, family.doc, labels=family.labels)
            for labels, value in _rows(values, family.name):
                out.add_metric(labels, value)
            yield out
        yield _coverage(values)
        yield _graph_latency(values)
        last = GaugeMetricFamily(
            "leadrelay_last_event_delivered_timestamp_seconds",
            "When Meta last confirmed an event (0: never). Alert when it stops moving.",
        )
        last.add_metric([], values.get((counters.LAST_DELIVERED,), 0.0))
        yield last
        yield from _queue_gauges(queue_status(self.queue))
        workers = GaugeMetricFamily(
            "leadrelay_workers", "Live RQ workers listening on the queue (0: nothing is being sent).", labels=["queue"]
        )
        workers.add_metric([self.queue.name], Worker.count(connection=self.connection, queue=self.queue))
        yield workers
        dead = GaugeMetricFamily(
            "leadrelay_dead_letters",
            "Dead letters waiting for replay, by reason and dataset.",
            labels=["reason", "dataset"],
        )
        for (reason, dataset), count in sorted(deadletters.by_reason(self.connection).items()):
            dead.add_metric([reason, dataset], count)
        yield dead
        paused = GaugeMetricFamily("leadrelay_tokens_paused", "Tokens Meta refused; jobs needing them wait.")
        pauses = Pauses(self.connection).all()
        paused.add_metric([], len(pauses))
        yield paused
        retest = GaugeMetricFamily(
            "leadrelay_token_next_retest_timestamp_seconds",
            "When each paused token is tested again (unix seconds); by the setting that holds it.",
            labels=["token"],
        )
        for pause in pauses:
            retest.add_metric([pause["token"]], pause["next_retest_at"])
        yield retest
        yield from _watched(watched.read(self.connection) or {})
        yield from _person_index(personindex.progress(self.connection))
        slow = readinessmetrics.slow_figures(self.connection, self.routes, self.settings)
        yield from _accuracy(self.connection, slow["pages"])
        yield from readinessmetrics.families(slow["readiness"], values)


def _person_index(progress: dict):
    done = GaugeMetricFamily(
        "leadrelay_person_index_complete",
        "1 once every record kept before the person index is in it (forget reads the index); 0: it walks.",
    )
    done.add_metric([], 1 if progress["done"] else 0)
    yield done
    scanned = GaugeMetricFamily(
        "leadrelay_person_index_backfill_keys_scanned", "Keys the person index's backfill has read so far."
    )
    scanned.add_metric([], progress["scanned"])
    yield scanned


def _watched(found: dict):
    """What the scheduled watch last found (workers/reports/watched.py)."""
    days = GaugeMetricFamily(
        "leadrelay_token_days_left",
        "Days until Meta says each token (or its data access) ends; no sample: it never does.",
        labels=["token"],
    )
    for token in found.get("tokens", []):
        if token.get("days_left") is not None:
            days.add_metric([token["token"]], token["days_left"])
    yield days
    unsubscribed = GaugeMetricFamily(
        "leadrelay_page_unsubscribed",
        "1 for a Page whose app subscription lacks leadgen: no webhooks come.",
        labels=["page"],
    )
    for page in found.get("pages", []):  # the Pages in trouble only: a thousand fine ones are no series
        if "subscribed" in page and not page["subscribed"]:
            unsubscribed.add_metric([page["page"]], 1)
    yield unsubscribed


def _accuracy(connection, pages: dict[str, dict]):
    """Of the Lead Ads leads of the last 7 days, per Page, where each stands. Per Page, not
    per form, and at most 50 Pages by name (the least accurate; the rest summed as
    `_other`, accuracy.bounded): an agency's thousand forms or Pages would be thousands of
    series at every scrape (`leadrelay accuracy` and the admin page have them all)."""
    leads = GaugeMetricFamily(
        "leadrelay_leads",
        "Lead Ads leads created in the last 7 days, by Page and state (meta: listed by Meta; "
        "webhook; recovered: by the sweep; confirmed; kept: in dry run; dead; waiting; too_old).",
        labels=["page", "state"],
    )
    for page, figures in sorted(pages.items()):
        for state in ("meta", "webhook", "recovered", "confirmed", "kept", "dead", "waiting", "too_old"):
            leads.add_metric([page, state], figures[state])
    yield leads
    ratio = GaugeMetricFamily(
        "leadrelay_lead_accuracy_ratio",
        "Share of the last 7 days' known leads whose Lead event Meta confirmed (or kept, in dry run), by Page.",
        labels=["page"],
    )
    for page, figures in sorted(pages.items()):
        if figures["accuracy"] is not None:
            ratio.add_metric([page], figures["accuracy"])
    yield ratio
    silent = GaugeMetricFamily(
        "leadrelay_webhook_silent",
        "1 for a Page flagged webhook_silent: the sweep found leads no webhook brought.",
        labels=["page"],
    )
    for page in sorted(accuracy.silent(connection)):
        silent.add_metric([page], 1)
    yield silent


def _rows(values: dict, name: str):
    return sorted((key[1:], value) for key, value in values.items() if key[0] == name)


def _coverage(values: dict) -> GaugeMetricFamily:
    """Share of events (delivered or dry-run) carrying each match key, since the counters
    began, per dataset."""
    out = GaugeMetricFamily(
        "leadrelay_match_key_coverage_ratio",
        "Share of sent events carrying each match key, "
        "by event name and dataset: a local stand-in for Meta's Event Match Quality.",
        labels=["event_name", "key", "dataset"],
    )
    datasets = sorted({labels[3] for labels in values if labels[0] == counters.EVENTS.name})
    for dataset in datasets:
        for event_name, row in counters.coverage(values, dataset).items():
            for match_key, share in row["keys"].items():
                out.add_metric([event_name, match_key, dataset], round(share, 4))
    return out


def _graph_latency(values: dict) -> HistogramMetricFamily:
    out = HistogramMetricFamily(counters.GRAPH.name, counters.GRAPH.doc, labels=counters.GRAPH.labels)
    for labels in sorted({key[:2] for key, _ in _rows(values, counters.GRAPH.name)}):
        out.add_metric(list(labels), *counters.cumulative(values, counters.GRAPH, labels, counters.GRAPH_BUCKETS))
    return out


def _queue_gauges(status: dict):
    jobs = GaugeMetricFamily(
        "leadrelay_queue_jobs",
        "Jobs in each state, per queue (inbox: new leads waiting for a drain job, also in queued).",
        labels=["queue", "state"],
    )
    for state in ("queued", "inbox", "intermediate", "started", "scheduled", "deferred", "failed", "finished"):
        jobs.add_metric([status["queue"], state], status[state])
    yield jobs
    depth = GaugeMetricFamily(
        "leadrelay_queue_depth", "Jobs and new leads waiting to run, per queue.", labels=["queue"]
    )
    depth.add_metric([status["queue"]], status["queued"])
    yield depth
    age = GaugeMetricFamily(
        "leadrelay_queue_oldest_job_age_seconds",
        "How long the oldest waiting job has waited (0 when none), per queue.",
        labels=["queue"],
    )
    age.add_metric([status["queue"]], status["oldest_queued_seconds"])
    yield age


@bp.get("/metrics")
def scrape():
    """Prometheus text format; behind LEADRELAY_METRICS_TOKEN when that is set."""
    ext = current_app.extensions["leadrelay"]
    if ext["settings"].metrics_token:
        tokenauth.check(ext["settings"].metrics_token, "LEADRELAY_METRICS_TOKEN", "metrics")
    deliveries.flush()  # this process's deliveries of the last second are counted in what it answers
    stored_registry = CollectorRegistry(auto_describe=False)
    stored_registry.register(RedisCollector(ext["redis"], ext["queue"], ext["routes"], ext["settings"]))
    return Response(
        generate_latest(_web_registry()) + generate_latest(stored_registry), content_type=CONTENT_TYPE_LATEST
    )
