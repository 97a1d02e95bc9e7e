"""Bringing in what did not arrive by webhook: stage changes from a sheet, leads whose
webhook never came."""

from __future__ import annotations

import sys
from collections import Counter

import click

from ..required import WORKER
from .common import mapping_or_exit, progress, running_queue, settings_or_exit


@click.command("import-stages", short_help="Queue stage changes from a CSV export.")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def import_stages(path: str):
    """Queue stage changes from a sheet export (CSV with a header row).

    Columns: stage, occurred_at, and any of leadgen_id, email, phone, external_id,
    submission_id; optional value, currency, lead_event_source, ldu. Prints a line
    per row; negative stages are recorded, not sent. Exits 1 when a row was rejected.
    """
    import csv

    from .. import stages

    settings = settings_or_exit()
    connection, q = running_queue()
    stage_map = mapping_or_exit(settings)["stages"]
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [stages.from_sheet_row(row) for row in csv.DictReader(handle)]
    results = []
    with click.progressbar(length=len(rows), label="importing", file=sys.stderr) as bar:
        for start in range(0, len(rows), stages.MAX_ITEMS):
            chunk = rows[start:start + stages.MAX_ITEMS]
            for result in stages.accept(connection, q, chunk, stage_map, settings.default_region,
                                        settings.lead_event_source):
                results.append({**result, "row": start + result["index"] + 2})  # +2: header, 1-based
            bar.update(len(chunk))
    for result in results:
        detail = (result.get("event_name") or result.get("event_id") or
                  (f"negative stage {result['stage']!r}, not sent" if result["status"] == "recorded" else
                   f"{result.get('reason')}: {result.get('detail')}"))
        click.echo(f"row {result['row']}: {result['status']} {detail}")
    counts = Counter(r["status"] for r in results)
    click.echo(f"{len(rows)} rows: accepted {counts['accepted']}, duplicate {counts['duplicate']}, "
               f"recorded (negative stages, not sent) {counts['recorded']}, rejected {counts['rejected']}")
    if counts["rejected"]:
        sys.exit(1)


@click.command("reconcile", short_help="Enqueue leads whose webhook never came.")
@click.option("--form-id", required=True, help="The Lead Ads form whose leads to read.")
@click.option("--since", default="2d", show_default=True, help="Leads created after: 30m, 6h, 2d, or an ISO time.")
def reconcile_command(form_id: str, since: str):
    """Enqueue the form's leads whose webhook never arrived (deduped like webhooks)."""
    from .. import times

    from ..graph import Graph
    from ..policy import DeliveryError
    from ..reconcile import reconcile

    settings = settings_or_exit(WORKER)
    try:
        cutoff = int(times.since(since))
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--since") from None
    processing = mapping_or_exit(settings)["processing"].get("meta")
    connection, q = running_queue()
    try:
        counts = reconcile(Graph(settings), q, form_id, cutoff, processing, watch=progress(f"form {form_id}"))
    except DeliveryError as err:
        raise click.ClickException(f"Graph refused the lead list ({err.reason}: {err.detail}, code {err.code}"
                                   f"/{err.subcode}, fbtrace_id {err.fbtrace_id})") from None
    click.echo(f"form {form_id}: {counts['found']} leads since {since}, enqueued {counts['enqueued']}, "
               f"already known {counts['already_known']}")
