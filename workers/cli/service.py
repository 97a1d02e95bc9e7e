"""Running and checking the service: run, worker, check-config, doctor, subscribe."""

from __future__ import annotations

import json
import os
import sys

import click

from workers.cli.common import mapping_or_exit, meta_said, redis_usable_or_exit, settings_or_exit
from workers.config import environment
from workers.config.needed import WEB, WORKER, ConfigError


@click.command(short_help="Run web, worker and Redis (a sandbox if unset).")
@click.option(
    "--bind", default=None, help="Address the web process listens on (default: LEADRELAY_BIND, else 127.0.0.1:8000)."
)
@click.option(
    "--data-dir",
    default=None,
    type=click.Path(file_okay=False),
    help="Local state: the embedded Redis, the web's address (default: LEADRELAY_DATA_DIR, else data/; "
    "the sandbox keeps its own in <data>/sandbox/).",
)
def run(bind: str | None, data_dir: str | None):
    """Run web, worker and Redis together (the sandbox if nothing is set)."""
    from workers.run import supervisor, webserver

    if data_dir:
        os.environ[environment.DATA_DIR] = data_dir
    environment.apply(start_sandbox=True)
    settings = settings_or_exit(WEB, WORKER, skip=("REDIS_URL",))
    mapping_or_exit(settings)
    bind = bind or os.environ.get("LEADRELAY_BIND", "").strip() or webserver.DEFAULT_BIND
    try:
        status = supervisor.run_all(settings, bind, environment.data_dir())
    except ConfigError as err:  # REDIS_URL is the sandbox's, or the sandbox's is someone else's
        click.echo(f"leadrelay: configuration error: {err}", err=True)
        status = 2
    except RuntimeError as err:  # the port is taken; the embedded Redis or the stand-in could not start
        click.echo(f"leadrelay: {err}", err=True)
        status = 1
    sys.exit(status)


@click.command(
    short_help="Run the web process (gunicorn, leadrelay's settings).",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("gunicorn_args", nargs=-1, type=click.UNPROCESSED)
def web(gunicorn_args: tuple[str, ...]):
    """Run the receiver, the stage API, the admin page and /metrics under gunicorn with
    the settings leadrelay ships (gevent workers, settings checked before forking, JSON
    logs). Listens on LEADRELAY_BIND, else 0.0.0.0:$PORT (8000); WEB_CONCURRENCY
    processes. Anything after `web` goes to gunicorn: `leadrelay web --reuse-port`.
    """
    from workers.run import webserver

    try:
        webserver.exec_web(gunicorn_args)
    except RuntimeError as err:
        click.echo(f"leadrelay: {err}", err=True)
        sys.exit(1)


@click.command(short_help="Run an RQ worker on leadrelay's queue.")
@click.option("--burst", is_flag=True, help="Process everything queued, then exit.")
def worker(burst: bool):
    """Run an RQ worker (with its scheduler) on leadrelay's queue."""
    from workers.run import worker as process

    settings = settings_or_exit(WORKER)
    mapping_or_exit(settings)  # the same mistake stops every process the same way
    redis_usable_or_exit(settings, role="worker")
    process.work(settings, burst=burst)


@click.command("check-config", short_help="Check settings and the mapping file.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the settings (secrets masked) and routes.")
def check_config(as_json: bool):
    """Check settings and the mapping file, and say what they mean: where leads go, with
    which token's variable (never a token). Every mistake is named at once, one line each,
    then it exits 1."""
    from workers.config import mappingfile
    from workers.config.settings import load

    try:
        settings = load(role=(WEB, WORKER), skip=("REDIS_URL",))
        mapping = mappingfile.validate(settings)
    except ConfigError as err:
        if as_json:
            click.echo(json.dumps({"ok": False, "problems": [f"{name}: {what}" for name, what in err.problems]}))
        else:
            click.echo(f"{len(err.problems)} mistake(s) to fix; every process would stop at start on them:")
            for name, what in err.problems:
                click.echo(f"  {name}: {what}")
        sys.exit(1)
    summary = {
        **settings.masked(),
        "mapping": {
            "forms": {source: sorted(forms) for source, forms in mapping["forms"].items()},
            "negative_stages": sorted(mapping["stages"].negative),
            "sources_with_ldu": sorted(name for name, fields in mapping["processing"].items() if fields),
            "routes": _routes_summary(mapping["routes"]),
        },
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=list))
        return
    for line in _sentences(summary):
        click.echo(line)


def _sentences(summary: dict) -> list[str]:
    """check-config's answer as a person reads it."""
    mapping, routes = summary["mapping"], summary["mapping"]["routes"]
    mode = "the sandbox (no Meta settings: nothing reaches Meta or Google)" if summary.get("sandbox") else "live"
    lines = [f"The configuration is good: every process will start with it. Mode: {mode}."]
    lines.append(f"Redis: {summary['redis_url'] or 'the embedded one, in the data folder'}.")
    for name, d in routes["datasets"].items():
        sends = "sends live" if d["sends"] == "live" else "keeps events (dry run: no CAPI token)"
        lines.append(f"Dataset {name} (id {d['id'] or 'unset'}): {sends}, token from {d['token_env']}.")
    for page, p in routes["pages"].items():
        which = "every Page" if page == "*" else f"Page {page}"
        lines.append(f"{which}: read with {p['token_env']}, leads to dataset {p['dataset']}.")
    for form, dataset in routes["forms"].items():
        lines.append(f"Form {form}: to dataset {dataset}.")
    for name, c in routes["clients"].items():
        lines.append(f"API client {name}: token from {c['token_env']}, reaches {', '.join(c['datasets'])}.")
    for name, g in routes["google"].items():
        sends = "sends live" if g["sends"] == "live" else "keeps events (dry run: no GOOGLE_APPLICATION_CREDENTIALS)"
        actions = ", ".join(f"{event} {action}" for event, action in sorted(g["conversion_actions"].items()))
        lines.append(
            f"Google destination {name} (account {g['operating_account']}, dataset {g['dataset']}): {sends}; "
            f"forms {', '.join(g['forms'])}; conversion actions {actions}."
        )
    mapped = [f"{source} {form}" for source, forms in mapping["forms"].items() for form in forms]
    lines.append(f"Forms mapped: {', '.join(mapped) if mapped else 'none (every form is read with the defaults)'}.")
    secrets = [name for name, state in summary["source_secrets"].items() if state == "set"]
    lines.append(f"Sources with a secret: {', '.join(secrets) or 'none'}. `--json` prints all of it for machines.")
    return lines


def _routes_summary(routes) -> dict:
    """Where leads go, with the variables that hold the tokens (never the tokens)."""
    return {
        "datasets": {
            d.name: {"id": d.id, "token_env": d.token_env, "sends": "dry-run" if d.dry_run else "live"}
            for d in routes.datasets.values()
        },
        "default_dataset": routes.default,
        "pages": {p.id: {"dataset": p.dataset, "token_env": p.token_env} for p in routes.pages.values()},
        "forms": {f"{source}.{form}": dataset for (source, form), dataset in routes.forms.items()},
        "clients": {
            c.name: {"datasets": sorted(c.datasets), "token_env": c.token_env} for c in routes.clients.values()
        },
        "google": {
            g.key: {
                "operating_account": g.operating_account,
                "login_account": g.login_account,
                "dataset": g.name,
                "forms": sorted(g.forms),
                "conversion_actions": dict(g.conversion_actions),
                "sends": "dry-run" if g.dry_run else "live",
            }
            for g in routes.google.values()
        },
    }


@click.command(short_help="Check the whole setup; a fix for each.")
@click.option("--page-id", help="Also check that this Page sends leadgen webhooks to the app.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: every check with its fix.")
def doctor(page_id: str | None, as_json: bool):
    """Check configuration, Redis, tokens, permissions, dataset, Page subscription and API version;
    with datasets and Pages in the mapping file, one checklist per dataset and its Pages.
    Exits 1 when a check fails."""
    from workers.run import doctor as checkup

    checks = checkup.run(page_id=page_id)
    failed = sum(1 for c in checks if not c.ok)
    if as_json:
        click.echo(json.dumps({"passed": len(checks) - failed, "checks": [c.__dict__ for c in checks]}))
        sys.exit(1 if failed else 0)
    client = ""
    for check in checks:
        if check.client != client and check.client != "default":
            click.echo(f"\n{check.client}:")
        client = check.client
        click.echo(f"[{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
        if not check.ok and check.fix:
            click.echo(f"       fix: {check.fix}")
    click.echo(f"{len(checks) - failed} of {len(checks)} checks passed")
    if failed:
        sys.exit(1)


@click.command(short_help="Subscribe the app to a Page's leadgen.")
@click.option("--page-id", help="The Facebook Page whose leads should reach leadrelay.")
@click.option("--all", "everything", is_flag=True, help="Every Page in the mapping file, each with its own token.")
def subscribe(page_id: str | None, everything: bool):
    """Install the app on a Page for `leadgen` (Meta sends no lead webhooks before this).

    Exits 1 when Meta refused any Page.
    """
    from workers.common.policy import JobError
    from workers.config.routing import ANY_PAGE
    from workers.run.doctor import subscribe as install

    if bool(page_id) == everything:
        raise click.UsageError("say which: --page-id ID, or --all (the mapping file's Pages)")
    settings = settings_or_exit(WORKER)
    routes = mapping_or_exit(settings)["routes"]
    if everything:
        targets = [(p.id, p.token) for p in routes.pages.values() if p.id != ANY_PAGE]
        if not targets:
            raise click.UsageError("the mapping file lists no Pages: give --page-id")
    else:
        page = routes.pages.get(page_id) or routes.pages.get(ANY_PAGE)
        if page is None:
            raise click.BadParameter(f"page {page_id} is not in the mapping file", param_hint="--page-id")
        targets = [(page_id, page.token)]
    refused = 0
    for target, token in targets:
        try:
            install(settings, target, token)
            click.echo(f"page {target}: subscribed to leadgen")
        except JobError as err:
            refused += 1
            click.echo(
                f"page {target}: {meta_said(err, 'a Page token with pages_manage_metadata is needed')}", err=True
            )
    if refused:
        sys.exit(1)
