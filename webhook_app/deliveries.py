"""Routine webhook deliveries, logged and counted once a second per web process, not one
request at a time.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

import os

from workers.common import logs
from workers.intake.unusable import UNUSABLE_REASONS

from . import greenlets, webmetrics

EVERY_SECONDS = 1.0
PER_LINE = 50  # deliveries per `webhooks` line: ~10 KB, under the 16 KB at which Docker splits a line
log = logs.get("webhook_app.webhooks")


class _Tally:
    def __init__(self):
        self.pid = os.getpid()
        self.deliveries: list[dict] = []
        self.flusher = None


_tally = _Tally()


def note(source: str, request_id: str, counts: dict, skipped: list[dict], elapsed: float) -> None:
    """A delivery answered 2xx: counted and logged now, or with the next hand-on."""
    delivery = {
        "source": source,
        "request_id": request_id,
        "accepted": counts["accepted"],
        "duplicates": counts["duplicates"],
        "skipped": len(skipped),
        "unusable": sum(1 for s in skipped if s["reason"] in UNUSABLE_REASONS),  # a body we could not read
        "job_ids": counts["job_ids"],
        "skip_reasons": sorted({s["reason"] for s in skipped}),
        "elapsed_ms": round(elapsed * 1000, 2),
    }
    if not greenlets.cooperative():
        _count([delivery])
        log.info("webhook", outcome="accepted", **delivery)
        return
    tally = _own_tally()
    tally.deliveries.append(delivery)
    if tally.flusher is None or tally.flusher.dead:  # the first delivery, or a hand-on that died
        import gevent

        tally.flusher = gevent.spawn(_hand_on_every_second, tally)


def flush() -> None:
    """Hand on what this process holds now (a scrape, an exit)."""
    tally = _own_tally()
    held, tally.deliveries = tally.deliveries, []
    if not held:
        return
    _count(held)
    for start in range(0, len(held), PER_LINE):
        log.info("webhooks", outcome="accepted", deliveries=held[start : start + PER_LINE])


def _hand_on_every_second(tally: _Tally) -> None:
    import gevent

    while tally is _tally:
        gevent.sleep(EVERY_SECONDS)
        try:
            flush()
        except Exception:  # a closed or full stderr: the next second tries again, with what came since
            pass


def _count(deliveries: list[dict]) -> None:
    totals: dict[tuple[str, str], int] = {}
    for d in deliveries:
        counted = (
            ("accepted", d["accepted"]),
            ("duplicate", d["duplicates"]),
            ("ignored", d["skipped"] - d.get("unusable", 0)),
            ("malformed", d.get("unusable", 0)),  # authenticated, acknowledged, unreadable: alerted on
        )
        for outcome, number in counted:
            if number:
                totals[d["source"], outcome] = totals.get((d["source"], outcome), 0) + number
        webmetrics.webhook_seconds(d["source"]).observe(d["elapsed_ms"] / 1000)
    for (source, outcome), number in totals.items():
        webmetrics.webhooks(source, outcome).inc(number)


def _own_tally() -> _Tally:
    """This process's tally: a forked child starts its own (it never hands on its parent's)."""
    global _tally
    if _tally.pid != os.getpid():
        _tally = _Tally()
    return _tally
