"""The readiness report: what `leadrelay readiness`, the admin page and /metrics show.

Notes: docs/internals/reports.md
"""

from __future__ import annotations

import time

from workers.common import counters
from workers.config import versions
from workers.config.routing import Routes
from workers.events import accuracyrollup, funnel, gates, stagelag
from workers.graphapi import versionsignals
from workers.reports import watched


def report(connection, routes: Routes, settings, now: float | None = None) -> dict:
    now = time.time() if now is None else now
    names = sorted(routes.datasets)
    figures = funnel.read(connection, names, now)
    daily = accuracyrollup.coverage(connection, routes, now)  # per dataset: a few keys a day, not one per form
    covered = {
        name: (sum(done for done, _ in days.values()), sum(known for _, known in days.values()))
        for name, days in daily.items()
    }
    found = watched.read(connection) or {}
    values = counters.read(connection)
    version = versions.horizon(settings.api_version)
    signal = versionsignals.read(connection)  # what Meta itself said, whatever our table says
    out = {
        "checked_at": int(now),
        "datasets": [
            {
                **_dataset_report(routes, figures[name], covered.get(name), now, daily.get(name)),
                "match": match_quality(values, name),
                # Meta's own figures, for web events only; None: the watch has not asked yet.
                "meta_quality": (found.get("dataset_quality") or {}).get(name),
            }
            for name in names
        ],
        "watched_at": found.get("checked_at"),
        "tokens": found.get("tokens", []),
        "pages": found.get("pages", []),
        "watch_problems": watched.problems(found),
        "sources": stagelag.report(connection, values, settings.source_silent_hours, now),
        "chats": counters.chats(values),  # chat-born leads per channel, and their stages sent
        "api_version": {
            "version": version.version,
            "ends": version.ends.isoformat() if version.ends else None,
            "days_left": version.days_left,
            "warn": version.warn or signal is not None,
            "said": version.say() + (f"; Meta says: {signal['warning']}" if signal else ""),
            "meta_says": signal,
        },
    }
    out["problems"] = problems(out)
    return out


# The keys a match-quality figure counts: Meta shows none for CRM events (its Dataset Quality
# API covers web events only), so this is the one place a Conversion Leads user sees it.
MATCH_KEYS = ("lead_id", "em", "ph", "fn", "ln", "country", "fbc")


def match_quality(values: dict, dataset: str) -> list[dict]:
    """Per event name sent to `dataset` since the counters began: how many, the share carrying
    each of MATCH_KEYS, and the match keys an event carries on average (every key counted)."""
    out = []
    for name, row in counters.coverage(values, dataset).items():
        shares = row["keys"]
        out.append(
            {
                "event_name": name,
                "events": row["events"],
                "shares": {key: round(shares[key], 4) for key in MATCH_KEYS},
                "keys_per_event": round(sum(shares.values()), 2),
            }
        )
    return out


def _dataset_report(routes: Routes, figures: funnel.Figures, coverage, now: float, daily: dict | None) -> dict:
    dataset = routes.datasets[figures.dataset]
    judged = gates.judge(figures, coverage, now, daily)
    return {
        "dataset": figures.dataset,
        "id": dataset.id,
        "dry_run": dataset.dry_run,
        "ready": all(gate.passed for gate in judged),
        "gates": [gate.as_dict() for gate in judged],
        "stages": [
            {
                "event_name": stage.event_name,
                "reached": stage.reached,
                "share": stage.share,
                "median_days": stage.median_days,
                "later": stage.later,
                "in_range": stage.in_range,
            }
            for stage in figures.stages
        ],
        "by_day": [{"day": on, "leads": leads, "stage_events": staged} for on, leads, staged in figures.by_day],
        # Meta's guide: every status change its own event, not the last one; these moved
        # through several stages between two uploads and each stage went (last 30 days).
        "histories": {"leads": figures.histories, "events": figures.history_events},
    }


def problems(report_: dict) -> list[str]:
    """One line per thing a person must act on, with what to do."""
    lines = []
    for dataset in report_["datasets"]:
        for gate in dataset["gates"]:
            if not gate["passed"]:
                lines.append(f"{dataset['dataset']}: {gate['title']} is {gate['figure']} (needs {gate['threshold']})")
    lines += [f"{found['what']}: {found['fix']}" for found in report_["watch_problems"]]
    lines += [
        f"source {s['source']}: silent for {s['quiet_hours']} h while leads keep coming: {s['fix']}"
        for s in report_["sources"]
        if s["silent"]
    ]
    if report_["api_version"]["warn"]:
        lines.append(f"api version {report_['api_version']['said']}: set META_API_VERSION to a current version")
    return lines
