"""`leadrelay readiness`: Meta's Conversion Leads gates per dataset, tokens and Pages,
stage sources and the API version, each with what to do (workers/reports/readiness.py)."""

from __future__ import annotations

import json

import click

from workers.cli.common import mapping_or_exit, running_queue, settings_or_exit, when


@click.command(short_help="Whether Meta can optimise for your funnel yet, and what stops it.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: datasets, tokens, pages, sources, version.")
def readiness(as_json: bool):
    """Per dataset, each gate Meta checks before Conversion Leads optimises for a stage
    (leads in 30 days, Lead Coverage, funnel stages, a stage 1-40% of leads reach within
    28 days, daily uploads) with its figure and verdict; then the tokens and Pages the
    watch last checked, how late each stage source posts and which fell silent, and the
    Graph API version's end. Exits 1 when something needs you."""
    from workers.reports.readiness import report

    connection, _ = running_queue()
    settings = settings_or_exit()
    routes = mapping_or_exit(settings)["routes"]
    found = report(connection, routes, settings)
    if as_json:
        click.echo(json.dumps(found, sort_keys=True))
    else:
        for line in render(found):
            click.echo(line)
    if found["problems"]:
        raise SystemExit(1)


def _ago(hours: float | None) -> str:
    if hours is None:
        return "never"
    return f"{hours:.1f} h ago" if hours < 48 else f"{hours / 24:.1f} days ago"


def render(found: dict) -> list[str]:
    lines = [f"leadrelay readiness, {when(found['checked_at'])}"]
    for dataset in found["datasets"]:
        lines += ["", f"dataset {dataset['dataset']} ({dataset['id'] or 'no id'})"]
        if dataset["dry_run"]:
            lines[-1] += ": dry run, these are the figures Meta would see"
        for gate in dataset["gates"]:
            mark = "[ok]  " if gate["passed"] else "[FAIL]"
            lines.append(f"  {mark} {gate['title']:<44} {gate['figure']:<28} needs {gate['threshold']}")
            if gate["fix"]:
                lines.append(f"         -> {gate['fix']}")
        if dataset.get("match"):
            keys = [k for k in dataset["match"][0]["shares"]]
            lines.append(
                f"  {'match quality':<16}{'events':>8}" + "".join(f"{k:>9}" for k in keys) + f"{'keys/event':>12}"
            )
            for row in dataset["match"]:
                shares = "".join(f"{row['shares'][k]:>9.0%}" for k in keys)
                lines.append(f"  {row['event_name']:<16}{row['events']:>8}{shares}{row['keys_per_event']:>12}")
        quality = dataset.get("meta_quality")
        if quality is not None:
            if quality["available"]:
                scores = ", ".join(
                    f"{row['event_name']} {row['composite_score'] if row['composite_score'] is not None else '-'}/10"
                    for row in quality["web"]
                )
                lines.append(f"  Meta's event match quality (web events): {scores}")
            else:
                lines.append(f"  Meta's event match quality: not available ({quality['reason']})")
        if dataset["histories"]["leads"]:
            lines.append(
                f"  stage histories: {dataset['histories']['leads']} lead(s) moved through several stages between two "
                f"uploads, {dataset['histories']['events']} events, each stage its own (last 30 days)"
            )
        if dataset["stages"]:
            lines.append(f"  {'stage':<16}{'reached':>9}{'share':>9}{'median days':>13}  (leads of the last 30 days)")
            for stage in dataset["stages"]:
                share = f"{stage['share']:.1%}" if stage["share"] is not None else "-"
                median = f"{stage['median_days']:g}" if stage["median_days"] is not None else "-"
                lines.append(f"  {stage['event_name']:<16}{stage['reached']:>9}{share:>9}{median:>13}")
    lines += ["", f"tokens and Pages (the watch, {when(found['watched_at'])})"]
    if found["watched_at"] is None:
        lines.append("  not checked yet: a worker checks every LEADRELAY_WATCH_SECONDS; `leadrelay doctor` checks now")
    for token in found["tokens"]:
        left = "never ends" if token.get("days_left") is None else f"{token['days_left']} days left"
        state = "Meta refuses it" if token.get("valid") is False else token.get("error", left)
        lines.append(f"  {'[FAIL]' if token.get('warn') else '[ok]  '} {token['token']:<32} {state}")
    for page in found["pages"]:
        state = "subscribed to leadgen" if page.get("subscribed") else page.get("error", "NOT subscribed to leadgen")
        if page.get("reached") is False:
            state += f"; {page['token']} cannot read its leads"
        ok = page.get("subscribed") and page.get("reached") is not False
        lines.append(f"  {'[ok]  ' if ok else '[FAIL]'} page {page['page']:<27} {state}")
    lines += ["", "stage sources"]
    if not found["sources"]:
        lines.append("  none has posted a stage yet")
    for source in found["sources"]:
        lines.append(
            f"  {'[FAIL]' if source['silent'] else '[ok]  '} {source['source']:<14} {source['arrived']:>6} arrived, "
            f"median {source['median'] or '-'}, {source['near_edge']} near the 7-day edge, "
            f"{source['too_late']} too late, last post {_ago(source['quiet_hours'])}"
            + (" (SILENT)" if source["silent"] else "")
        )
    if found.get("chats"):
        lines += ["", "chats started from an ad (docs/whatsapp.md)"]
        for row in found["chats"]:
            sent = ", ".join(f"{n} {name}" for name, n in sorted(row["stages"].items())) or "no stage sent yet"
            lines.append(f"  {row['channel']:<14} {row['started']:>6} started; sent back: {sent}")
    lines += ["", f"api version {found['api_version']['said']}"]
    problems = found["problems"]
    lines += ["", f"{len(problems)} to act on" + (":" if problems else ": ready as far as leadrelay can see")]
    lines += [f"  - {line}" for line in problems]
    return lines
