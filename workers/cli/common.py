"""What every command shares: settings and the mapping file checked (one message, exit 2),
the running service's queue, progress bars, dead-letter filters."""

from __future__ import annotations

import sys

import click
import redis

from .. import deadletters, environment, logs, policy
from ..mappingfile import validate
from ..queues import connect, queue
from ..required import ConfigError
from ..settings import Settings, load
from ..sources import EVENT_SOURCES


def settings_or_exit(*roles: str, skip: tuple[str, ...] = ()) -> Settings:
    """Settings for a command; a mistake is one message naming every bad setting, exit 2."""
    try:
        settings = load(role=roles, skip=skip)
    except ConfigError as err:
        click.echo(f"leadrelay: configuration error:\n  " + str(err).replace("\n", "\n  "), err=True)
        sys.exit(2)
    logs.configure(settings.log_level)
    return settings


def mapping_or_exit(settings: Settings) -> dict:
    """The mapping file checked (LEADRELAY_CONFIG); a bad entry is one line, exit 2."""
    try:
        return validate(settings.config_path)
    except ConfigError as err:
        click.echo(f"leadrelay: configuration error: {err}", err=True)
        sys.exit(2)


def running_queue():
    """Redis and the queue of the running service; one line when nothing answers."""
    settings = settings_or_exit()
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


def progress(label: str):
    """A progress bar over a stream of unknown length (pages of leads)."""
    def watch(items):
        with click.progressbar(items, label=label, file=sys.stderr, show_pos=True) as bar:
            yield from bar
    return watch


DEAD_LETTER_REASONS = (policy.TRANSIENT, policy.THROTTLED, policy.AUTH, policy.INVALID, policy.EXPIRED,
                       policy.CRASHED)


def filter_options(command):
    """The options that pick dead letters: --reason, --source, --event, --since."""
    for option in reversed([
        click.option("--reason", type=click.Choice(DEAD_LETTER_REASONS), help="Why the job failed for good."),
        click.option("--source", type=click.Choice(EVENT_SOURCES), help="Where it came from."),
        click.option("--event", "event_name", help="Event name, e.g. Lead."),
        click.option("--since", help="Last attempt at or after: 30m, 6h, 2d, or an ISO date/time."),
    ]):
        command = option(command)
    return command


def dead_letter_filter(job_ids=(), **options) -> deadletters.Filter:
    try:
        return deadletters.Filter.from_mapping(options, job_ids)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--since") from None
