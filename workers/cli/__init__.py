"""The `leadrelay` command: a thin layer over the processes (workers/run) and the stores.

Notes: docs/internals/cli.md
"""

from __future__ import annotations

import click

from workers.cli import accounting, crm, failures, imports, privacy, readiness, samples, sent, service
from workers.cli.common import SERVICES, VERBOSE
from workers.common import logs
from workers.config import environment


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="leadrelay", message="leadrelay %(version)s")
@click.option("-v", "--verbose", is_flag=True, help="Also print the structured log lines (JSON, on stderr).")
@click.pass_context
def main(ctx: click.Context, verbose: bool):
    """leadrelay: Meta (and Google Ads) leads and funnel stages to each platform's conversion API.

    Settings come from the environment, then a .env file in this folder; with no Meta
    setting at all, from the local sandbox that `leadrelay run` sets up in data/sandbox/.
    Commands answer in plain language on stdout (most take --json for scripts); the
    services (run, web, worker) log structured JSON lines on stderr.
    """
    ctx.meta[VERBOSE] = verbose
    if ctx.invoked_subcommand not in SERVICES:  # stdout is the command's answer: log lines, if any, on stderr
        logs.configure("INFO" if verbose else "CRITICAL")
    ctx.ensure_object(dict)  # {"clock": ...} from a caller that runs commands in its own process
    if ctx.invoked_subcommand != "run":  # run decides about the sandbox itself, after --data-dir
        environment.apply()


for command in (
    service.run,
    service.web,
    service.worker,
    sent.dry_run,
    sent.coverage,
    service.check_config,
    failures.dead_letters_group,
    failures.replay,
    failures.resume,
    failures.ignored,
    imports.import_stages,
    imports.reconcile_command,
    service.doctor,
    service.subscribe,
    samples.send_test,
    accounting.accuracy,
    accounting.sweep,
    readiness.readiness,
    crm.crm_stages,
    privacy.forget,
    privacy.unsuppress,
    privacy.export_person,
    privacy.audit_trail,
):
    main.add_command(command)
