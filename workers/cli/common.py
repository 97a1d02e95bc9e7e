"""What every command shares: settings and the mapping file checked (one message, exit 2),
the running service's queue, progress bars, dead-letter filters.

Notes: docs/internals/cli.md
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Callable, Sequence

import click

from workers.common import policy
from workers.config import environment
from workers.config.needed import ConfigError


class LazyChoice(click.Choice):
    """A choice whose values are read when an option is parsed or its help shown."""

    def __init__(self, load: Callable[[], Sequence[str]]):
        self._load = load
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._load())


def when(unix: float | None) -> str:
    """A moment as a person reads it in a terminal: `2026-11-26 03:04 UTC`."""
    if not unix:
        return "never"
    return datetime.fromtimestamp(float(unix), timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def settings_or_exit(*roles: str, skip: tuple[str, ...] = ()):
    """Settings for a command; a mistake is one message naming every bad setting, exit 2."""
    from workers.common import logs
    from workers.config.settings import load

    try:
        settings = load(role=roles, skip=skip)
    except ConfigError as err:
        click.echo("leadrelay: configuration error:\n  " + str(err).replace("\n", "\n  "), err=True)
        sys.exit(2)
    logs.configure(settings.log_level if speaks_in_logs() else "CRITICAL")
    return settings


SERVICES = ("run", "web", "worker")  # their log lines are their output


def meta_said(err, needs: str = "") -> str:
    """What a failed Graph call means to a person: Meta's refusal with its code and what it
    needs, or, with no answer at all, that Meta was never reached and where to look."""
    if err.code is None:
        return (
            f"Meta could not be reached ({err.detail}): check the network, a proxy, or META_GRAPH_URL; "
            "nothing was changed at Meta"
        )
    return f"Meta refused: {err.reason} code {err.code}/{err.subcode} ({err.detail}){'; ' + needs if needs else ''}"


def speaks_in_logs() -> bool:
    """A service logs as configured; any other command answers in plain language on
    stdout and keeps its structured log lines for --verbose (on stderr)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return True
    return bool(ctx.meta.get(VERBOSE)) or ctx.find_root().invoked_subcommand in SERVICES


VERBOSE = "leadrelay.verbose"


def mapping_or_exit(settings) -> dict:
    """The mapping file checked (LEADRELAY_CONFIG); a bad entry is one line, exit 2."""
    from workers.config.mappingfile import validate

    try:
        return validate(settings)
    except ConfigError as err:
        click.echo(f"leadrelay: configuration error: {err}", err=True)
        sys.exit(2)


def redis_usable_or_exit(settings, connection=None, role: str | None = None) -> None:
    """Live never uses the sandbox's Redis, nor the sandbox a live one; a process that
    acknowledges or works leads (`role`) refuses a Redis that can lose them. One line, exit 2."""
    from workers.common.queues import connect
    from workers.run import redisowner

    connection = connection or connect(settings.redis_url)
    try:
        redisowner.usable(connection, settings, str(environment.data_dir()), role)
    except ConfigError as err:
        click.echo(f"leadrelay: configuration error: {err}", err=True)
        sys.exit(2)


def running_queue():
    """Redis and the queue of the running service; one line when nothing answers."""
    import redis

    from workers.common import redisurl, replication
    from workers.common.queues import connect, queue

    settings = settings_or_exit()
    if not settings.redis_url:
        raise click.ClickException(
            "no leadrelay is running here: REDIS_URL is unset and there is no "
            f"{environment.data_dir() / environment.REDIS_URL_FILE}; start one with `{environment.start_command()}`"
        )
    connection = connect(settings.redis_url)
    replication.configure(settings.replica_acks, settings.replica_ack_timeout_ms)
    try:
        connection.ping()
    except redis.RedisError:
        kept = environment.kept_redis_url(environment.data_dir()) == settings.redis_url
        raise click.ClickException(
            f"nothing answers at {redisurl.masked(settings.redis_url)}"
            + (
                f" (where `leadrelay run` last ran its Redis): start it with `{environment.start_command()}`"
                if kept
                else ": check REDIS_URL"
            )
        ) from None
    redis_usable_or_exit(settings, connection)
    return connection, queue(connection, settings.queue_name)


@contextmanager
def counting(length: int, label: str):
    """A progress bar of known length on a terminal, yielding its `update(n)`; piped into a
    file or a script, nothing is drawn."""
    if not sys.stderr.isatty():
        yield lambda n=1: None
        return
    with click.progressbar(length=length, label=label, file=sys.stderr) as bar:
        yield bar.update


def progress(label: str):
    """A progress bar over a stream of unknown length (pages of leads), on a terminal only:
    piped into a file or a script, the items pass through silently."""

    def watch(items):
        if not sys.stderr.isatty():
            yield from items
            return
        with click.progressbar(items, label=label, file=sys.stderr, show_pos=True) as bar:
            yield from bar

    return watch


DEAD_LETTER_REASONS = (policy.TRANSIENT, policy.THROTTLED, policy.AUTH, policy.INVALID, policy.EXPIRED, policy.CRASHED)


def _event_sources() -> tuple[str, ...]:
    from workers.sources.registry import EVENT_SOURCES

    return EVENT_SOURCES


def filter_options(command):
    """The options that pick dead letters: --reason, --source, --event, --since, --dataset."""
    for option in reversed(
        [
            click.option("--reason", type=click.Choice(DEAD_LETTER_REASONS), help="Why the job failed for good."),
            click.option("--source", type=LazyChoice(_event_sources), help="Where it came from."),
            click.option("--event", "event_name", help="Event name, e.g. Lead."),
            click.option("--since", help="Last attempt at or after: 30m, 6h, 2d, or an ISO date/time."),
            click.option("--dataset", help="A dataset's name in the mapping file (`default`: the environment's)."),
        ]
    ):
        command = option(command)
    return command


def dead_letter_filter(job_ids=(), **options):
    """The deadletters.Filter the options name; a bad --since is a usage error."""
    from workers.failures.deadletters import Filter

    try:
        return Filter.from_mapping(options, job_ids)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--since") from None
