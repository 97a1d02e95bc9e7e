"""Bringing in what did not arrive by webhook: stage changes from a sheet, leads whose
webhook never came."""

from __future__ import annotations

import os
import sys
from collections import Counter

import click

from workers.cli.common import counting, mapping_or_exit, progress, running_queue, settings_or_exit
from workers.config.needed import WORKER


@click.command("import-stages", short_help="Queue stage changes from a CSV export.")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--client", help="An API client of the mapping file: its leads and datasets only.")
def import_stages(path: str, client: str | None):
    """Queue stage changes from a sheet export (CSV with a header row).

    Columns: stage, occurred_at, and any of leadgen_id, email, phone, external_id,
    submission_id; optional value, currency, lead_event_source, ldu, dataset. Prints a
    line per row; negative stages are recorded, not sent. Exits 1 when a row was rejected.
    """
    import csv

    from workers.intake import stageitems

    settings = settings_or_exit()
    connection, q = running_queue()
    mapping = mapping_or_exit(settings)
    stage_map, routes = mapping["stages"], mapping["routes"]
    if client is not None and client not in routes.clients:
        raise click.BadParameter(f"no client {client!r} in the mapping file", param_hint="--client")
    scope = stageitems.Scope(routes, routes.clients.get(client))
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [stageitems.from_sheet_row(row) for row in csv.DictReader(handle)]
    results = []
    with counting(len(rows), "importing") as update:
        for start in range(0, len(rows), stageitems.MAX_ITEMS):
            chunk = rows[start : start + stageitems.MAX_ITEMS]
            for result in stageitems.accept(connection, q, chunk, stage_map, settings.default_region, scope, "sheet"):
                results.append({**result, "row": start + result["index"] + 2})  # +2: header, 1-based
            update(len(chunk))
    for result in results:
        detail = (
            result.get("event_name")
            or result.get("event_id")
            or (
                f"negative stage {result['stage']!r}, not sent"
                if result["status"] == "recorded"
                else f"{result.get('reason')}: {result.get('detail')}"
            )
        )
        click.echo(f"row {result['row']}: {result['status']} {detail}")
    counts = Counter(r["status"] for r in results)
    from workers.privacy import audit  # who imported what: counts and the file's name, never a row

    detail = {"file": os.path.basename(path), "rows": len(rows), **{k: counts[k] for k in sorted(counts)}}
    audit.record(connection, *audit.cli_actor(), "import_stages", settings.audit_retention_days, **detail)
    click.echo(
        f"{len(rows)} rows: accepted {counts['accepted']}, duplicate {counts['duplicate']}, "
        f"recorded (negative stages, not sent) {counts['recorded']}, rejected {counts['rejected']}"
    )
    if counts["rejected"]:
        sys.exit(1)


@click.command("reconcile", short_help="Enqueue leads whose webhook never came.")
@click.option("--form-id", help="The Lead Ads form whose leads to read.")
@click.option("--page-id", help="The Page the form belongs to (needed once the mapping file lists Pages).")
@click.option("--all", "everything", is_flag=True, help="Every form of every Page in the mapping file.")
@click.option("--since", default="2d", show_default=True, help="Leads created after: 30m, 6h, 2d, or an ISO time.")
def reconcile_command(form_id: str | None, page_id: str | None, everything: bool, since: str):
    """Enqueue the leads whose webhook never arrived (deduped and routed like webhooks):
    one form's, or with --all every form of every Page the mapping file lists."""
    from workers.common import times
    from workers.common.policy import JobError
    from workers.config.routing import ANY_PAGE
    from workers.graphapi.graph import Graph
    from workers.sweep.reconcile import reconcile, reconcile_all

    if bool(form_id) == everything:
        raise click.UsageError("say which: --form-id ID (with --page-id once the file lists Pages), or --all")
    settings = settings_or_exit(WORKER)
    try:
        cutoff = int(times.since(since))
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--since") from None
    mapping = mapping_or_exit(settings)
    routes, processing = mapping["routes"], mapping["processing"].get("meta")
    if form_id and (page_id or ANY_PAGE) not in routes.pages:
        raise click.BadParameter(
            "give the form's --page-id, one of the mapping file's Pages"
            if not page_id
            else f"page {page_id} is not in the mapping file",
            param_hint="--page-id",
        )
    connection, q = running_queue()
    try:
        if everything:
            found = reconcile_all(Graph(settings), q, routes, cutoff, processing, watch_factory=progress)
        else:
            found = {
                f"{page_id or 'page'}/{form_id}": reconcile(
                    Graph(settings), q, routes, form_id, cutoff, page_id, processing, watch=progress(f"form {form_id}")
                )
            }
    except JobError as err:
        raise click.ClickException(
            f"Graph refused the list ({err.reason}: {err.detail}, code {err.code}"
            f"/{err.subcode}, fbtrace_id {err.fbtrace_id})"
        ) from None
    for where, counts in found.items():
        page, _, form = where.partition("/")
        click.echo(
            f"form {form}" + (f" (page {page})" if page != "page" else "") + f": {counts['found']} leads "
            f"since {since}, enqueued {counts['enqueued']}, already known {counts['already_known']}"
        )
    if everything and not found:
        click.echo("no Page in the mapping file: give --form-id instead")
