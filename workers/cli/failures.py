"""What failed and what waits: dead letters, replay, paused tokens, ignored deliveries."""

from __future__ import annotations

import json
import sys
from collections import Counter

import click

from workers.cli.common import counting, dead_letter_filter, filter_options, running_queue, settings_or_exit


@click.group("dead-letters", short_help="List, show and purge failed jobs.")
def dead_letters_group():
    """Jobs that failed for good, with their reasons."""


@dead_letters_group.command("list")
@filter_options
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def dead_letters_list(as_json: bool, **options):
    """List dead letters (personal data redacted), grouped by reason."""
    from workers.failures import deadletters
    from workers.failures.advice import advice
    from workers.graphapi.pauses import Pauses

    connection, q = running_queue()
    entries = deadletters.select(connection, q, dead_letter_filter(**options))
    if as_json:
        for entry in entries:
            click.echo(json.dumps({**deadletters.summary(entry), **advice(entry)}, sort_keys=True))
        return
    by_reason = Counter(e["reason"] for e in entries)
    for pause in Pauses(connection).all():
        click.echo(
            f"paused: {pause['token']} (fingerprint {pause['fingerprint']}) refused with code "
            f"{_code(pause)}; {pause['waiting']} jobs waiting on it: put a working token in place, then "
            f"`leadrelay replay --reason auth`"
        )
    click.echo(
        f"{len(entries)} dead letters"
        + (": " + ", ".join(f"{n} {r}" for r, n in by_reason.most_common()) if entries else "")
    )
    for entry in entries:
        row = deadletters.summary(entry)
        told = advice(entry)
        click.echo(
            f"  {row['job_id']:<32} {row['reason']:<10} {row.get('dataset') or 'default':<12} "
            f"{row.get('event_name') or '-':<14} attempts {row['attempts']:<3} {row['age_hours']:>6}h ago"
        )
        said = " ".join(part for part in (told["call"] + ":" if told["call"] else "", told["said"]) if part)
        click.echo(f"      {said + ' ' if said else ''}{told['meaning'] or row.get('detail') or ''}".rstrip())
        if row.get("user_title") or row.get("fbtrace_id"):  # what the fix asks a person to read
            title = f'Meta\'s title: "{row["user_title"]}"' if row.get("user_title") else ""
            trace = f"fbtrace_id {row['fbtrace_id']}" if row.get("fbtrace_id") else ""
            click.echo("      " + ", ".join(part for part in (title, trace) if part))
        click.echo(f"      what to do: {told['fix']}")


@dead_letters_group.command("show")
@click.argument("job_id")
def dead_letters_show(job_id: str):
    """One dead letter in full, personal data redacted.

    Exits 1 when there is no such dead letter.
    """
    from workers.failures import deadletters

    connection, _ = running_queue()
    entry = deadletters.get(connection, job_id)
    if entry is None:
        raise click.ClickException(f"no dead letter {job_id} (`leadrelay dead-letters list` shows them)")
    click.echo(json.dumps(deadletters.summary(entry), indent=2, sort_keys=True))


@dead_letters_group.command("purge")
@filter_options
@click.option("--all", "everything", is_flag=True, help="Every dead letter.")
@click.option("--dry-run", is_flag=True, help="Count what would go; change nothing.")
def dead_letters_purge(everything: bool, dry_run: bool, **options):
    """Delete dead letters for good (they cannot be replayed after)."""
    from workers.failures import deadletters

    where = dead_letter_filter(**options)
    if where.empty and not everything:
        raise click.UsageError("say which: --reason/--source/--event/--since/--dataset, or --all")
    connection, q = running_queue()
    entries = deadletters.select(connection, q, where)
    if not dry_run:
        with counting(len(entries), "purging") as update:
            for entry in entries:
                deadletters.purge(connection, q, entry["job_id"])
                update(1)
        _audit(connection, "purge", **audit_selection(where), purged=len(entries))
    click.echo(f"{'would purge' if dry_run else 'purged'} {len(entries)} dead letters")


@click.command(short_help="Requeue dead letters once fixed.")
@click.argument("job_ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Every dead letter.")
@filter_options
@click.option("--dry-run", is_flag=True, help="Count what would go and what can no longer be sent; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the counts and each job's outcome.")
def replay(job_ids, everything: bool, dry_run: bool, as_json: bool, **options):
    """Requeue dead letters once their cause is fixed: by id, by filter, or --all.

    Each job is handled on its own; an event Meta already confirmed is not sent again,
    and one past Meta's 7-day window is refused. Exits 1 if any job was not requeued.
    """
    from workers.failures.replay import run_replay

    where = dead_letter_filter(job_ids, **options)
    if where.empty and not everything:
        raise click.UsageError("say which: JOB_ID..., --reason/--source/--event/--since/--dataset, or --all")
    connection, q = running_queue()

    def bar(length):
        return counting(length, "replaying")

    clock = (click.get_current_context().find_root().obj or {}).get("clock")
    result = run_replay(connection, q, where, everything, dry_run, progress_factory=bar, now=clock() if clock else None)
    counts = result["counts"]
    if not dry_run:
        _audit(connection, "replay", **audit_selection(where), **counts)
    failed = counts["not_found"] or (not dry_run and (counts["expired"] or counts["failed"]))
    if as_json:
        click.echo(json.dumps(result, sort_keys=True, default=str))
        sys.exit(1 if failed else 0)
    verb = "would requeue" if dry_run else "requeued"
    click.echo(
        f"{result['selected']} selected: {verb} {counts['requeued']}, already delivered "
        f"{counts['already_delivered']}, expired (past Meta's 7 days) {counts['expired']}, "
        f"failed {counts['failed']}"
    )
    if result["woken"] or result["waiting_on_paused_tokens"]:
        click.echo(f"jobs waiting on paused tokens: {result['waiting_on_paused_tokens']}, woken now: {result['woken']}")
    if counts["not_found"]:
        click.echo(f"not found (no such dead letter): {counts['not_found']}")
    for item in result["results"]:
        if item["outcome"] in ("expired", "failed", "not_found"):
            click.echo(f"  {item['job_id']}: {item['outcome']} {item.get('error') or ''}".rstrip())
    if failed:
        sys.exit(1)


@click.command(short_help="Lift token pauses; run waiting jobs.")
@click.argument("fingerprints", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Every paused token.")
def resume(fingerprints, everything: bool):
    """Lift token pauses (after an auth failure) and run the jobs waiting on them.

    Without arguments, lists the paused tokens.
    """
    from workers.graphapi.pauses import Pauses

    connection, q = running_queue()
    board = Pauses(connection)
    paused = board.all()
    if not fingerprints and not everything:
        if not paused:
            click.echo("no token is paused")
        for item in paused:
            click.echo(f"{item['fingerprint']}  {item['token']}  code {_code(item)}  {item['waiting']} jobs waiting")
        return
    targets = [p["fingerprint"] for p in paused] if everything else list(fingerprints)
    for fp in targets:
        click.echo(f"{fp}: resumed, {board.resume(fp, q)} waiting jobs requeued")


@click.command(short_help="Show deliveries acknowledged, not sent.")
@click.option("-n", "--count", default=20, show_default=True, help="How many of the newest to show.")
@click.option(
    "--release",
    is_flag=True,
    help="Send the leads held for an unknown Page that the mapping file now routes (deduped like webhooks).",
)
def ignored(count: int, release: bool):
    """Deliveries acknowledged but not sent, newest first: unknown form or Page, no
    consent, test request, a signed body that could not be read (with its shape). Leads
    from a Page not in the mapping file are held: add the
    Page, restart, then `--release` sends them."""
    from workers.cli.common import mapping_or_exit, settings_or_exit
    from workers.intake import admission, kinds
    from workers.sources import meta
    from workers.sources.registry import SOURCES

    connection, q = running_queue()
    if release:
        mapping = mapping_or_exit(settings_or_exit())
        counts = kinds.release_held(q, SOURCES[meta.NAME], mapping["routes"], mapping["processing"].get(meta.NAME))
        click.echo(
            f"{counts['held']} held: released {counts['released']}, already known {counts['already_known']}, "
            f"still without a route {counts['still_held']}"
        )
        return
    held = admission.held(connection)
    if held:
        pages = sorted({item.get("page_id") or "?" for item in held})
        click.echo(
            f"{len(held)} leads held for Pages not in the mapping file ({', '.join(pages)}): add the Pages, "
            f"restart, then `leadrelay ignored --release`"
        )
    rows = connection.lrange(admission.IGNORED, 0, count - 1)
    if not rows:
        click.echo("nothing ignored", err=True)
    for raw in rows:
        click.echo(raw.decode())
    _ignored_in_all(connection, admission.IGNORED_KEEP)


def _ignored_in_all(connection, kept: int) -> None:
    """Said on stderr: only the newest `kept` items are listed; the counters hold them all."""
    from workers.common import counters

    totals = {}
    for (name, source, reason), value in (
        (key, value) for key, value in counters.read(connection).items() if key[0] == counters.IGNORED.name
    ):
        totals[f"{source} {reason}"] = totals.get(f"{source} {reason}", 0) + int(value)
    if totals:
        by = ", ".join(f"{what} {n}" for what, n in sorted(totals.items()))
        click.echo(
            f"the newest {kept} are kept to list; {sum(totals.values())} in all since the counters began ({by}); "
            "/metrics: leadrelay_items_ignored_total",
            err=True,
        )


def _code(record: dict) -> str:
    """Meta's code as a person reads it: 190/463, or 190 alone."""
    return f"{record.get('code')}" + (f"/{record['subcode']}" if record.get("subcode") else "")


def audit_selection(where) -> dict:
    from workers.privacy import audit

    return audit.selection(where)


def _audit(connection, action: str, **detail) -> None:
    """The audit trail names this command's user as who (workers/privacy/audit.py)."""
    from workers.privacy import audit

    audit.record(connection, *audit.cli_actor(), action, settings_or_exit().audit_retention_days, **detail)
