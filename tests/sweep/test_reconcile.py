"""Reconcile: leads whose webhook never came are read from the form and enqueued once."""

import time

from helpers import leadgen_body, leadrelay


def test_reconcile_enqueues_only_the_leads_the_webhook_missed(graph, post_meta, work):
    now = int(time.time())
    for i in range(250):  # three pages of 100
        graph.add_lead(str(10**15 + i), created_time=now - 3600 - i)
    graph.add_lead(str(10**15 + 999), created_time=now - 5 * 86400)  # older than --since
    post_meta(leadgen_body(str(10**15), created_time=now - 3600))  # this one's webhook did arrive
    out = leadrelay("reconcile", "--form-id", "555", "--since", "2d")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "form 555: 250 leads since 2d, enqueued 249, already known 1"
    assert len(graph.calls("form_leads")) == 3
    again = leadrelay("reconcile", "--form-id", "555", "--since", "2d")
    assert "enqueued 0, already known 250" in again.stdout
    work()
    assert len(graph.events) == 250 and len({e["event_id"] for e in graph.events}) == 250


def test_reconcile_reports_a_refused_token(env, graph):
    graph.revoked.add("test-page-token")
    out = leadrelay("reconcile", "--form-id", "555")
    assert out.returncode == 1 and "auth" in out.stderr and "190" in out.stderr
