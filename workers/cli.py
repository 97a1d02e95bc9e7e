"""The `leadrelay` command: a thin layer over the runner and the stores."""

from __future__ import annotations

import json
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import click

from webhook_app import logs
from webhook_app.config import WEB, WORKER, ConfigError, Settings, load, require
from webhook_app.intake import IGNORED

from . import capi, deadletters, runner
from .pauses import Pauses
from .queues import connect, queue


def _settings(*roles: str, skip: tuple[str, ...] = ()) -> Settings:
    try:
        settings = load()
        for role in roles:
            require(settings, role, skip=skip)
    except ConfigError as err:
        raise click.ClickException(f"configuration error: {err}") from None
    logs.configure(settings.log_level)
    return settings


@click.group()
def main():
    """leadrelay: Meta leads and funnel stages to the Conversions API."""


@main.command()
@click.option("--bind", default="127.0.0.1:8000", show_default=True, help="Address the web process listens on.")
@click.option("--data-dir", default="data", show_default=True, type=click.Path(file_okay=False),
              help="Where the embedded Redis keeps its append-only file.")
def run(bind: str, data_dir: str):
    """Run web and worker together (embedded Redis when REDIS_URL is unset)."""
    settings = _settings(WEB, WORKER, skip=("REDIS_URL",))
    capi.warn_at_start(settings, "run")
    sys.exit(runner.run_all(settings, bind, Path(data_dir).resolve()))


@main.command()
@click.option("--burst", is_flag=True, help="Process everything queued, then exit.")
def worker(burst: bool):
    """Run an RQ worker (with its scheduler) on leadrelay's queue."""
    runner.work(_settings(WORKER), burst=burst)


@main.command("dry-run")
@click.option("-n", "--count", default=10, show_default=True, help="How many of the newest events to show.")
def dry_run(count: int):
    """Show the newest events built while no CAPI token was set (JSON, one per line)."""
    connection, _ = _queue_context()
    kept = capi.last_dry_run(connection, count)
    if not kept:
        click.echo("no dry-run events kept", err=True)
    for item in kept:
        click.echo(json.dumps(item, sort_keys=True))


@main.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of tables.")
def coverage(as_json: bool):
    """Which match keys each event name carries: since the counters began, and lately."""
    from . import metrics

    connection, _ = _queue_context()
    tables = {"since the counters began": metrics.coverage(metrics.read(connection)),
              f"the last {metrics.RECENT_KEEP} events": metrics.recent_coverage(metrics.recent(connection))}
    if as_json:
        click.echo(json.dumps(tables, sort_keys=True))
        return
    for title, rows in tables.items():
        if not rows:
            click.echo(f"{title}: no events sent or dry-run yet")
            continue
        names = list(rows)
        width = max(8, *(len(n) for n in names))
        click.echo(f"{title}:\n{'key':<18}" + "".join(f"{n:>{width + 2}}" for n in names))
        click.echo(f"{'events':<18}" + "".join(f"{rows[n]['events']:>{width + 2}}" for n in names))
        for match_key in metrics.MATCH_KEYS:
            click.echo(f"{match_key:<18}" + "".join(f"{rows[n]['keys'][match_key]:>{width + 2}.0%}" for n in names))


@main.command("check-config")
def check_config():
    """Check the settings for both processes and print them, secrets masked."""
    settings = _settings(WEB, WORKER, skip=("REDIS_URL",))
    click.echo(json.dumps(settings.masked(), indent=2, default=list))


def _queue_context():
    settings = _settings()
    if not settings.redis_url:
        raise click.ClickException("configuration error: REDIS_URL: must be set (make run writes it to data/redis.url)")
    connection = connect(settings.redis_url)
    return connection, queue(connection, settings.queue_name)


def _filter_options(command):
    for option in reversed([
        click.option("--reason", help="transient, throttled, auth, invalid, expired or crashed."),
        click.option("--source", help="meta, typeform, tally, ..."),
        click.option("--event", "event_name", help="Event name, e.g. Lead."),
        click.option("--since", help="Last attempt at or after: 30m, 6h, 2d, or an ISO date/time."),
    ]):
        command = option(command)
    return command


def _where(job_ids=(), **options) -> deadletters.Filter:
    try:
        return deadletters.Filter.from_mapping(options, job_ids)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--since") from None


@main.group("dead-letters")
def dead_letters_group():
    """Jobs that failed for good, with their reasons."""


@dead_letters_group.command("list")
@_filter_options
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def dead_letters_list(as_json: bool, **options):
    """List dead letters (personal data redacted), grouped by reason."""
    connection, q = _queue_context()
    entries = deadletters.select(connection, q, _where(**options))
    if as_json:
        for entry in entries:
            click.echo(json.dumps(deadletters.summary(entry), sort_keys=True))
        return
    by_reason = Counter(e["reason"] for e in entries)
    for pause in Pauses(connection).all():
        click.echo(f"paused: {pause['token']} (fingerprint {pause['fingerprint']}) refused with code "
                   f"{pause.get('code')}/{pause.get('subcode')}; {pause['waiting']} jobs waiting on it")
    click.echo(f"{len(entries)} dead letters" + (": " + ", ".join(f"{n} {r}" for r, n in by_reason.most_common())
                                                 if entries else ""))
    for entry in entries:
        row = deadletters.summary(entry)
        meta = f"code {row['code']}/{row['subcode']}" if row.get("code") else ""
        click.echo(f"  {row['job_id']:<32} {row['reason']:<10} {row.get('event_name') or '-':<14} "
                   f"attempts {row['attempts']:<3} {row['age_hours']:>6}h ago  {meta} {row.get('detail') or ''}")


@main.command()
@click.argument("job_ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Every dead letter.")
@_filter_options
@click.option("--dry-run", is_flag=True, help="Count what would go and what can no longer be sent; change nothing.")
def replay(job_ids, everything: bool, dry_run: bool, **options):
    """Requeue dead letters once their cause is fixed: by id, by filter, or --all.

    Each job is handled on its own; an event Meta already confirmed is not sent again,
    and one past Meta's 7-day window is refused. Exits 1 if any job was not requeued.
    """
    where = _where(job_ids, **options)
    if where.empty and not everything:
        raise click.UsageError("say which: JOB_ID..., --reason/--source/--event/--since, or --all")
    connection, q = _queue_context()

    @contextmanager
    def bar(length):
        with click.progressbar(length=length, label="replaying", file=sys.stderr) as progress:
            yield progress.update

    result = deadletters.run_replay(connection, q, where, everything, dry_run, progress_factory=bar)
    counts = result["counts"]
    verb = "would requeue" if dry_run else "requeued"
    click.echo(f"{result['selected']} selected: {verb} {counts['requeued']}, already delivered "
               f"{counts['already_delivered']}, expired (past Meta's 7 days) {counts['expired']}, "
               f"failed {counts['failed']}")
    if result["woken"] or result["waiting_on_paused_tokens"]:
        click.echo(f"jobs waiting on paused tokens: {result['waiting_on_paused_tokens']}, woken now: {result['woken']}")
    for item in result["results"]:
        if item["outcome"] in ("expired", "failed"):
            click.echo(f"  {item['job_id']}: {item['outcome']} {item.get('error') or ''}".rstrip())
    if not dry_run and (counts["expired"] or counts["failed"]):
        sys.exit(1)


@main.command()
@click.argument("fingerprints", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Every paused token.")
def resume(fingerprints, everything: bool):
    """Lift token pauses (after an auth failure) and run the jobs waiting on them.

    Without arguments, lists the paused tokens.
    """
    connection, q = _queue_context()
    board = Pauses(connection)
    paused = board.all()
    if not fingerprints and not everything:
        if not paused:
            click.echo("no token is paused")
        for item in paused:
            click.echo(f"{item['fingerprint']}  {item['token']}  code {item.get('code')}/{item.get('subcode')}  "
                       f"{item['waiting']} jobs waiting")
        return
    targets = [p["fingerprint"] for p in paused] if everything else list(fingerprints)
    for fp in targets:
        click.echo(f"{fp}: resumed, {board.resume(fp, q)} waiting jobs requeued")


@main.command()
@click.option("-n", "--count", default=20, show_default=True, help="How many of the newest to show.")
def ignored(count: int):
    """Deliveries acknowledged but not sent, newest first: unknown form, no consent, test request."""
    connection, _ = _queue_context()
    rows = connection.lrange(IGNORED, 0, count - 1)
    if not rows:
        click.echo("nothing ignored", err=True)
    for raw in rows:
        click.echo(raw.decode())


CSV_NUMBERS = ("value",)


def _row_item(row: dict) -> dict:
    """A sheet row to a stage change: empty cells dropped, value as a number."""
    item = {k.strip(): v.strip() for k, v in row.items() if k and isinstance(v, str) and v.strip()}
    if "ldu" in item:
        item["ldu"] = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}.get(
            item["ldu"].lower(), item["ldu"])  # anything else is rejected with bad_ldu
    for name in CSV_NUMBERS:
        if name in item:
            try:
                item[name] = float(item[name])
            except ValueError:
                pass  # left as text: the check rejects it with bad_value
    return item


@main.command("import-stages")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def import_stages(path: str):
    """Queue stage changes from a sheet export (CSV with a header row).

    Columns: stage, occurred_at, and any of leadgen_id, email, phone, external_id,
    submission_id; optional value, currency, lead_event_source. Prints a line per
    row; exits 1 when any row was rejected.
    """
    import csv

    from webhook_app import formconfig, stages

    settings = _settings()
    connection, q = _queue_context()
    mapping = formconfig.read(settings.config_path)
    stage_map = stages.StageMap.load(mapping.get("stages", {}), formconfig.processing(mapping).get("crm"))
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [_row_item(row) for row in csv.DictReader(handle)]
    results = []
    with click.progressbar(length=len(rows), label="importing", file=sys.stderr) as bar:
        for start in range(0, len(rows), stages.MAX_ITEMS):
            chunk = rows[start:start + stages.MAX_ITEMS]
            for result in stages.accept(connection, q, chunk, stage_map, settings.default_region,
                                        settings.lead_event_source):
                results.append({**result, "row": start + result["index"] + 2})  # +2: header, 1-based
            bar.update(len(chunk))
    for result in results:
        detail = result.get("event_name") or result.get("event_id") or f"{result.get('reason')}: {result.get('detail')}"
        click.echo(f"row {result['row']}: {result['status']} {detail}")
    counts = Counter(r["status"] for r in results)
    click.echo(f"{len(rows)} rows: accepted {counts['accepted']}, duplicate {counts['duplicate']}, "
               f"rejected {counts['rejected']}")
    if counts["rejected"]:
        sys.exit(1)


@main.command("reconcile")
@click.option("--form-id", required=True, help="The Lead Ads form whose leads to read.")
@click.option("--since", default="2d", show_default=True, help="Leads created after: 30m, 6h, 2d, or an ISO time.")
def reconcile_command(form_id: str, since: str):
    """Enqueue the form's leads whose webhook never arrived (deduped like webhooks)."""
    from .graph import Graph
    from .policy import DeliveryError
    from .reconcile import reconcile

    settings = _settings(WORKER)
    try:
        cutoff = int(deadletters.parse_since(since))
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--since") from None
    from webhook_app import formconfig

    processing = formconfig.processing(formconfig.read(settings.config_path)).get("meta")
    connection, q = _queue_context()
    try:
        counts = reconcile(Graph(settings), q, form_id, cutoff, processing)
    except DeliveryError as err:
        raise click.ClickException(f"Graph refused the lead list ({err.reason}: {err.detail}, code {err.code}"
                                   f"/{err.subcode}, fbtrace_id {err.fbtrace_id})") from None
    click.echo(f"form {form_id}: {counts['found']} leads since {since}, enqueued {counts['enqueued']}, "
               f"already known {counts['already_known']}")


@main.command()
@click.option("--page-id", help="Also check that this Page sends leadgen webhooks to the app.")
def doctor(page_id: str | None):
    """Check configuration, Redis, tokens, permissions, dataset, Page subscription and API version."""
    from . import doctor as checkup

    checks = checkup.run(page_id=page_id)
    for check in checks:
        click.echo(f"[{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
        if not check.ok and check.fix:
            click.echo(f"       fix: {check.fix}")
    failed = sum(1 for c in checks if not c.ok)
    click.echo(f"{len(checks) - failed} of {len(checks)} checks passed")
    if failed:
        sys.exit(1)


@main.command()
@click.option("--page-id", required=True, help="The Facebook Page whose leads should reach leadrelay.")
def subscribe(page_id: str):
    """Install the app on the Page for `leadgen` (Meta sends no lead webhooks before this)."""
    from .doctor import subscribe as install
    from .policy import DeliveryError

    settings = _settings(WORKER)
    try:
        install(settings, page_id)
    except DeliveryError as err:
        raise click.ClickException(f"Meta refused: {err.reason} code {err.code}/{err.subcode} ({err.detail}); "
                                   f"a Page token with pages_manage_metadata is needed") from None
    click.echo(f"page {page_id}: subscribed to leadgen")
