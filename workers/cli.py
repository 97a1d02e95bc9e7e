"""The `leadrelay` command: a thin layer over the runner and the stores."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from webhook_app import logs
from webhook_app.config import WEB, WORKER, ConfigError, Settings, load, require

from . import capi, runner
from .queues import connect


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
    runner.warn_if_dry_run(settings, "run")
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
    settings = _settings()
    if not settings.redis_url:
        raise click.ClickException("configuration error: REDIS_URL: must be set (make run writes it to data/redis.url)")
    kept = capi.last_dry_run(connect(settings.redis_url), count)
    if not kept:
        click.echo("no dry-run events kept", err=True)
    for item in kept:
        click.echo(json.dumps(item, sort_keys=True))


@main.command("check-config")
def check_config():
    """Check the settings for both processes and print them, secrets masked."""
    settings = _settings(WEB, WORKER, skip=("REDIS_URL",))
    click.echo(json.dumps(settings.masked(), indent=2, default=list))
