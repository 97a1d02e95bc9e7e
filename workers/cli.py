"""The `leadrelay` command: a thin layer over the runner and the stores."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import click
import redis

from . import logs
from .required import WEB, WORKER, ConfigError
from .settings import Settings, load
from .intake import IGNORED

from . import capi, deadletters, environment, policy, runner, sendtest, times
from .replay import run_replay
from .pauses import Pauses
from .queues import connect, queue
from .sources import EVENT_SOURCES


def _settings(*roles: str, skip: tuple[str, ...] = ()) -> Settings:
    """Settings for a command; a mistake is one message naming every bad setting, exit 2."""
    try:
        settings = load(role=roles, skip=skip)
    except ConfigError as err:
        click.echo(f"leadrelay: configuration error:\n  " + str(err).replace("\n", "\n  "), err=True)
        sys.exit(2)
    logs.configure(settings.log_level)
    return settings


def _mapping(settings: Settings) -> dict:
    """The mapping file checked (LEADRELAY_CONFIG); a bad entry is one line, exit 2."""
    from . import mappingfile

    try:
        return mappingfile.validate(settings.config_path)
    except ConfigError as err:
        click.echo(f"leadrelay: configuration error: {err}", err=True)
        sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="leadrelay", message="leadrelay %(version)s")
@click.pass_context
def main(ctx: click.Context):
    """leadrelay: Meta leads and funnel stages to the Conversions API.

    Settings come from the environment, then a .env file in this folder; with no Meta
    setting at all, from the local sandbox that `leadrelay run` sets up in data/.
    """
    if ctx.invoked_subcommand != "run":  # run decides about the sandbox itself, after --data-dir
        environment.apply()


@main.command(short_help="Run web, worker and Redis (a sandbox if unset).")
@click.option("--bind", default="127.0.0.1:8000", show_default=True, help="Address the web process listens on.")
@click.option("--data-dir", default=None, type=click.Path(file_okay=False),
              help="Embedded Redis and sandbox files (default: data, or LEADRELAY_DATA_DIR).")
def run(bind: str, data_dir: str | None):
    """Run web, worker and Redis together (the sandbox if nothing is set)."""
    if data_dir:
        os.environ[environment.DATA_DIR] = data_dir
    environment.apply(start_sandbox=True)
    settings = _settings(WEB, WORKER, skip=("REDIS_URL",))
    _mapping(settings)
    try:
        status = runner.run_all(settings, bind, environment.data_dir())
    except RuntimeError as err:  # the embedded Redis or the stand-in could not start
        click.echo(f"leadrelay: {err}", err=True)
        status = 1
    sys.exit(status)


@main.command(short_help="Run an RQ worker on leadrelay's queue.")
@click.option("--burst", is_flag=True, help="Process everything queued, then exit.")
def worker(burst: bool):
    """Run an RQ worker (with its scheduler) on leadrelay's queue."""
    settings = _settings(WORKER)
    _mapping(settings)  # the same mistake stops every process the same way
    runner.work(settings, burst=burst)


@main.command("dry-run", short_help="Show events kept instead of sent.")
@click.option("-n", "--count", default=10, show_default=True, help="How many of the newest events to show.")
def dry_run(count: int):
    """Show the newest events built while no CAPI token was set (JSON, one per line)."""
    connection, _ = _queue_context()
    kept = capi.last_dry_run(connection, count)
    if not kept:
        click.echo("no dry-run events kept", err=True)
    for item in kept:
        click.echo(json.dumps(item, sort_keys=True))


@main.command(short_help="Share of events carrying each match key.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of tables.")
def coverage(as_json: bool):
    """Which match keys each event name carries: since the counters began, and lately."""
    from . import counters, matchkeys

    connection, _ = _queue_context()
    tables = {"since the counters began": counters.coverage(counters.read(connection)),
              f"the last {counters.RECENT_KEEP} events": counters.recent_coverage(counters.recent(connection))}
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
        for match_key in matchkeys.ALL:
            click.echo(f"{match_key:<18}" + "".join(f"{rows[n]['keys'][match_key]:>{width + 2}.0%}" for n in names))


@main.command("check-config", short_help="Check settings and the mapping file.")
def check_config():
    """Check settings and the mapping file; print them, secrets masked.

    Exits 1 naming every bad setting, or the bad entry of the mapping file.
    """
    from . import mappingfile

    try:
        settings = load(role=(WEB, WORKER), skip=("REDIS_URL",))
        mapping = mappingfile.validate(settings.config_path)
    except ConfigError as err:
        click.echo("configuration error:\n  " + str(err).replace("\n", "\n  "), err=True)
        sys.exit(1)
    summary = {**settings.masked(), "mapping": {
        "forms": {source: sorted(forms) for source, forms in mapping["forms"].items()},
        "negative_stages": sorted(mapping["stages"].negative),
        "sources_with_ldu": sorted(name for name, fields in mapping["processing"].items() if fields)}}
    click.echo(json.dumps(summary, indent=2, default=list))


def _queue_context():
    """Redis and the queue of the running service; one line when nothing answers."""
    settings = _settings()
    if not settings.redis_url:
        raise click.ClickException("no leadrelay is running here: REDIS_URL is unset and there is no "
                                   f"{environment.data_dir() / environment.REDIS_URL_FILE}; start one with `make run`")
    connection = connect(settings.redis_url)
    try:
        connection.ping()
    except redis.RedisError:
        kept = environment.kept_redis_url(environment.data_dir()) == settings.redis_url
        raise click.ClickException(
            f"nothing answers at {settings.redis_url}" + (" (where `leadrelay run` last ran its Redis): start it with "
                                                          "`make run`" if kept else ": check REDIS_URL")) from None
    return connection, queue(connection, settings.queue_name)


DEAD_LETTER_REASONS = (policy.TRANSIENT, policy.THROTTLED, policy.AUTH, policy.INVALID, policy.EXPIRED,
                       policy.CRASHED)


def _filter_options(command):
    for option in reversed([
        click.option("--reason", type=click.Choice(DEAD_LETTER_REASONS), help="Why the job failed for good."),
        click.option("--source", type=click.Choice(EVENT_SOURCES), help="Where it came from."),
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


@main.group("dead-letters", short_help="List, show and purge failed jobs.")
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


@dead_letters_group.command("show")
@click.argument("job_id")
def dead_letters_show(job_id: str):
    """One dead letter in full, personal data redacted.

    Exits 1 when there is no such dead letter.
    """
    connection, _ = _queue_context()
    entry = deadletters.get(connection, job_id)
    if entry is None:
        raise click.ClickException(f"no dead letter {job_id} (`leadrelay dead-letters list` shows them)")
    click.echo(json.dumps(deadletters.summary(entry), indent=2, sort_keys=True))


@dead_letters_group.command("purge")
@_filter_options
@click.option("--all", "everything", is_flag=True, help="Every dead letter.")
@click.option("--dry-run", is_flag=True, help="Count what would go; change nothing.")
def dead_letters_purge(everything: bool, dry_run: bool, **options):
    """Delete dead letters for good (they cannot be replayed after)."""
    where = _where(**options)
    if where.empty and not everything:
        raise click.UsageError("say which: --reason/--source/--event/--since, or --all")
    connection, q = _queue_context()
    entries = deadletters.select(connection, q, where)
    if not dry_run:
        with click.progressbar(entries, label="purging", file=sys.stderr) as bar:
            for entry in bar:
                deadletters.purge(connection, q, entry["job_id"])
    click.echo(f"{'would purge' if dry_run else 'purged'} {len(entries)} dead letters")


@main.command(short_help="Requeue dead letters once fixed.")
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

    result = run_replay(connection, q, where, everything, dry_run, progress_factory=bar)
    counts = result["counts"]
    verb = "would requeue" if dry_run else "requeued"
    click.echo(f"{result['selected']} selected: {verb} {counts['requeued']}, already delivered "
               f"{counts['already_delivered']}, expired (past Meta's 7 days) {counts['expired']}, "
               f"failed {counts['failed']}")
    if result["woken"] or result["waiting_on_paused_tokens"]:
        click.echo(f"jobs waiting on paused tokens: {result['waiting_on_paused_tokens']}, woken now: {result['woken']}")
    if counts["not_found"]:
        click.echo(f"not found (no such dead letter): {counts['not_found']}")
    for item in result["results"]:
        if item["outcome"] in ("expired", "failed", "not_found"):
            click.echo(f"  {item['job_id']}: {item['outcome']} {item.get('error') or ''}".rstrip())
    if counts["not_found"] or (not dry_run and (counts["expired"] or counts["failed"])):
        sys.exit(1)


@main.command(short_help="Lift token pauses; run waiting jobs.")
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


@main.command(short_help="Show deliveries acknowledged, not sent.")
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


@main.command("import-stages", short_help="Queue stage changes from a CSV export.")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def import_stages(path: str):
    """Queue stage changes from a sheet export (CSV with a header row).

    Columns: stage, occurred_at, and any of leadgen_id, email, phone, external_id,
    submission_id; optional value, currency, lead_event_source, ldu. Prints a line
    per row; negative stages are recorded, not sent. Exits 1 when a row was rejected.
    """
    import csv

    from . import stages

    settings = _settings()
    connection, q = _queue_context()
    stage_map = _mapping(settings)["stages"]
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
        detail = (result.get("event_name") or result.get("event_id") or
                  (f"negative stage {result['stage']!r}, not sent" if result["status"] == "recorded" else
                   f"{result.get('reason')}: {result.get('detail')}"))
        click.echo(f"row {result['row']}: {result['status']} {detail}")
    counts = Counter(r["status"] for r in results)
    click.echo(f"{len(rows)} rows: accepted {counts['accepted']}, duplicate {counts['duplicate']}, "
               f"recorded (negative stages, not sent) {counts['recorded']}, rejected {counts['rejected']}")
    if counts["rejected"]:
        sys.exit(1)


def _progress(label: str):
    """A progress bar over a stream of unknown length (pages of leads)."""
    def watch(items):
        with click.progressbar(items, label=label, file=sys.stderr, show_pos=True) as bar:
            yield from bar
    return watch


@main.command("reconcile", short_help="Enqueue leads whose webhook never came.")
@click.option("--form-id", required=True, help="The Lead Ads form whose leads to read.")
@click.option("--since", default="2d", show_default=True, help="Leads created after: 30m, 6h, 2d, or an ISO time.")
def reconcile_command(form_id: str, since: str):
    """Enqueue the form's leads whose webhook never arrived (deduped like webhooks)."""
    from .graph import Graph
    from .policy import DeliveryError
    from .reconcile import reconcile

    settings = _settings(WORKER)
    try:
        cutoff = int(times.since(since))
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--since") from None
    processing = _mapping(settings)["processing"].get("meta")
    connection, q = _queue_context()
    try:
        counts = reconcile(Graph(settings), q, form_id, cutoff, processing, watch=_progress(f"form {form_id}"))
    except DeliveryError as err:
        raise click.ClickException(f"Graph refused the lead list ({err.reason}: {err.detail}, code {err.code}"
                                   f"/{err.subcode}, fbtrace_id {err.fbtrace_id})") from None
    click.echo(f"form {form_id}: {counts['found']} leads since {since}, enqueued {counts['enqueued']}, "
               f"already known {counts['already_known']}")


@main.command(short_help="Check the whole setup; a fix for each.")
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


@main.command(short_help="Subscribe the app to a Page's leadgen.")
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


LAST_SENT = "send-test.json"  # the last sample lead, for `send-test stages`


@main.command("send-test", short_help="Send a signed sample to the running service.")
@click.argument("what", type=click.Choice(["meta", "typeform", "tally", "stages"]))
@click.option("--fail", type=click.Choice(sendtest.FAILURES),
              help="Sandbox, meta: make the lead fail this way (see the README's sandbox section).")
@click.option("--form-id", help="A real Meta app: the Lead Ads form to create Meta's test lead on.")
@click.option("--leadgen-id", help="stages: the lead to move (default: the last `send-test meta` lead).")
@click.option("--url", help="The service (default: where `leadrelay run` listens, from data/web.url).")
def send_test(what: str, fail: str | None, form_id: str | None, leadgen_id: str | None, url: str | None):
    """Send a correctly signed sample to the running service and say what to look at.

    meta: in the sandbox, a lead in the stand-in and its signed leadgen webhook
    (--fail auth|invalid|transient|expired to see a paused token, a dead letter, a
    retry, the 7-day window); with a real Meta app, Meta's test lead on --form-id.
    typeform, tally: a signed submission. stages: QualifiedLead, Schedule and
    Purchase for the last sample lead, through the stage API.
    """
    import requests

    from .policy import DeliveryError

    settings = _settings()
    data = environment.data_dir()
    web_file = data / runner.WEB_URL_FILE
    web = (url or (web_file.read_text().strip() if web_file.is_file() else "http://127.0.0.1:8000")).rstrip("/")
    if fail and (what != "meta" or not settings.sandbox):
        raise click.UsageError("--fail works with `send-test meta` in the sandbox (no Meta settings set)")
    try:
        if what == "meta" and not settings.sandbox:
            if not form_id:
                raise click.UsageError("with a real Meta app, give --form-id: Meta's test lead is made on that form")
            result = sendtest.meta_test_lead(settings, form_id)
        elif what == "meta":
            result = sendtest.meta_lead(settings, web, fail)
        elif what == "stages":
            last = data / LAST_SENT
            leadgen_id = leadgen_id or (json.loads(last.read_text())["leadgen_id"] if last.is_file() else None)
            if not leadgen_id:
                raise click.UsageError("no sample lead yet: run `leadrelay send-test meta` first, or give --leadgen-id")
            if not settings.api_token:
                raise click.UsageError("the stage API is off: set LEADRELAY_API_TOKEN")
            result = sendtest.stage_events(settings, web, leadgen_id)
        else:
            result = getattr(sendtest, f"{what}_submission")(settings, web)
    except requests.ConnectionError:
        raise click.ClickException(f"nothing answers at {web} (or at the Graph stand-in): is `make run` "
                                   f"running? (--url names another address)") from None
    except DeliveryError as err:
        raise click.ClickException(f"Meta refused: {err.reason} code {err.code}/{err.subcode} ({err.detail})") from None
    if what == "meta" and result.get("leadgen_id"):
        (data / LAST_SENT).write_text(json.dumps({"leadgen_id": result["leadgen_id"]}) + "\n")
    click.echo(json.dumps({k: v for k, v in result.items() if k != "next"}, sort_keys=True))
    if result.get("status", 200) >= 300:
        sys.exit(1)
    if settings.sandbox and what == "meta":
        click.echo(f"job: {_settled('lead-meta-' + result['leadgen_id'])}")
        if fail == "auth":  # a second lead, to see a job waiting on the paused token
            second = sendtest.meta_lead(settings, web)
            click.echo(f"second lead {second['leadgen_id']}: {_settled('lead-meta-' + second['leadgen_id'])}")
    click.echo(f"next: {result['next']}")


def _settled(job_id: str, timeout: float = 15.0) -> str:
    """Where the job stands once the worker has had a go at it (or after `timeout`)."""
    import time

    from rq.job import Job, JobStatus
    from rq.exceptions import NoSuchJobError

    connection, q = _queue_context()
    deadline = time.monotonic() + timeout
    status = "not found"
    while time.monotonic() < deadline:
        try:
            job = Job.fetch(job_id, connection=connection, serializer=q.serializer)
            status = job.get_status()
        except NoSuchJobError:
            status = "not found"
        if status in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.SCHEDULED, JobStatus.STOPPED):
            break
        time.sleep(0.2)
    status = getattr(status, "value", status)
    return {"finished": "done", "failed": "dead-lettered", "scheduled": "waiting (a retry, or a paused token)"}.get(
        status, status)
