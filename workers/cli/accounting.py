"""Whether every lead Meta holds reached it: `accuracy`, and `sweep` to look now."""

from __future__ import annotations

import json

import click

from workers.cli.common import running_queue, settings_or_exit, when
from workers.config.needed import WORKER

COLUMNS = ("meta", "webhook", "recovered", "confirmed", "kept", "dead", "waiting", "too_old")


@click.command(short_help="Of the leads Meta holds, how many reached it.")
@click.option("--days", default=7, show_default=True, type=click.IntRange(1, 7), help="How far back (at most 7).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: per form, per Page, and flagged Pages.")
def accuracy(days: int, as_json: bool):
    """Per Page and form, over the leads created in the last DAYS: how many Meta lists
    (the sweep reads them), came by webhook, were recovered by the sweep, were confirmed
    by Meta, dead-lettered, are still waiting, or were too old to send. Pages whose
    webhooks stopped are flagged webhook_silent. Exits 1 when one is."""
    from workers.events import accuracy as figures

    connection, _ = running_queue()
    rows = figures.report(connection, days)
    silent = figures.silent(connection)
    if as_json:
        click.echo(
            json.dumps({"forms": rows, "pages": figures.by_page(rows), "webhook_silent": silent}, sort_keys=True)
        )
    elif not rows:
        click.echo(f"no Lead Ads leads in the last {days} days")
    else:
        click.echo(f"{'page':<18}{'form':<18}" + "".join(f"{c:>10}" for c in COLUMNS) + f"{'accuracy':>10}")
        for row in rows:
            share = f"{row['accuracy']:.1%}" if row["accuracy"] is not None else "-"
            click.echo(
                f"{row['page_id']:<18}{row['form_id']:<18}" + "".join(f"{row[c]:>10}" for c in COLUMNS) + f"{share:>10}"
            )
    for page_id, flag in sorted(silent.items()):
        click.echo(
            f"page {page_id}: webhook_silent since {when(flag['since'])} ({flag['recovered']} leads only the sweep "
            f"found): run `leadrelay doctor --page-id {page_id}`, then `leadrelay subscribe --page-id "
            f"{page_id}`",
            err=True,
        )
    if silent:
        raise SystemExit(1)


@click.command(short_help="Sweep every form's leads now.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: per form, listed, recovered, known, too old.")
def sweep(as_json: bool):
    """Read every Page's Lead Ads forms now and enqueue the leads no webhook brought (what
    the worker does every LEADRELAY_SWEEP_SECONDS), from where the last sweep stopped."""
    from workers import jobs
    from workers.common.policy import JobError
    from workers.sweep.sweeper import sweep as run

    settings = settings_or_exit(WORKER)
    _, q = running_queue()
    try:
        result = run(jobs.install(settings), q)
    except JobError as err:
        raise click.ClickException(
            f"Graph refused ({err.reason}: {err.detail}, code {err.code}/{err.subcode})"
        ) from None
    if as_json:
        click.echo(json.dumps(result, sort_keys=True))
        return
    for where, counts in sorted(result.get("forms", {}).items()):
        click.echo(
            f"{where}: listed {counts['listed']}, recovered {counts['recovered']}, already known "
            f"{counts['known']}, too old {counts['too_old']}"
        )
    click.echo(f"sweep: {result['outcome']}" + (f", next in {result['retry_in']} s" if result.get("retry_in") else ""))
