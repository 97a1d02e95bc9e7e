"""One person's data and the audit trail: forget, unsuppress, export-person, audit."""

from __future__ import annotations

import json
import sys

import click

from workers.cli.common import mapping_or_exit, running_queue, settings_or_exit


def person_options(command):
    for name, text in reversed(
        (
            ("email", "Their email, as they gave it."),
            ("phone", "Their phone, as they gave it (national numbers read with --region)."),
            ("lead-id", "A Lead Ads lead id (leadgen_id)."),
            ("external-id", "Your CRM's id for them, as you send it as external_id."),
            ("person-id", "A profile's id as source:id (hubspot:512, typeform:FORM:TOKEN)."),
        )
    ):
        command = click.option(f"--{name}", multiple=True, help=text)(command)
    command = click.option(
        "--all-matching",
        is_flag=True,
        help="Go ahead when the identifiers reach other people's leads too (a shared phone or external id).",
    )(command)
    command = click.option(
        "--client", default=None, help="Only this client's datasets (the mapping file's [clients.NAME]); default: all."
    )(command)
    return click.option("--region", default=None, help="Country for national phone numbers (default: the setting).")(
        command
    )


def _given(options: dict) -> dict:
    return {name: list(options.get(name) or ()) for name in ("email", "phone", "lead_id", "external_id", "person_id")}


def _context():
    settings = settings_or_exit()
    routes = mapping_or_exit(settings)["routes"]
    connection, _ = running_queue()
    return settings, routes, connection


def _datasets(routes, client: str | None) -> list[str]:
    if client is None:
        return sorted(routes.datasets)
    if client not in routes.clients:
        raise click.BadParameter(f"no client {client!r} in the mapping file", param_hint="--client")
    return sorted(routes.clients[client].datasets)


@click.command(short_help="Erase one person everywhere and keep them suppressed.")
@person_options
@click.option("--json", "as_json", is_flag=True, help="One JSON object: what was removed, by kind.")
def forget(region, client, all_matching: bool, as_json: bool, **options):
    """Remove every record that holds one person (profiles, waiting jobs, dead letters,
    quarantine, claims, ledger entries, accuracy flags) in every dataset, keep their hashes
    on the suppression list so nothing more about them is kept or sent, and audit it.
    With --client, only that client's datasets (another client's lead with the same email
    is left alone)."""
    from workers.privacy import audit
    from workers.privacy.forget import SharedIdentifiers
    from workers.privacy.forget import forget as run
    from workers.privacy.person import NoIdentifier
    from workers.privacy.records import counted

    settings, routes, connection = _context()
    try:
        done = run(
            connection, routes, _given(options), region or settings.default_region, _datasets(routes, client),
            *audit.cli_actor(), settings.audit_retention_days, all_matching=all_matching,
        )  # fmt: skip
    except (NoIdentifier, SharedIdentifiers) as err:
        raise click.UsageError(str(err)) from None
    if as_json:
        click.echo(json.dumps(done, sort_keys=True))
        return
    removed = ", ".join(counted(n, kind) for kind, n in done["removed"].items()) or "nothing was held"
    click.echo(f"forgotten as {done['ref']} in {', '.join(done['datasets'])}: removed {removed}")
    if done["others"]:
        click.echo(f"with {done['others']} lead(s) of others sharing their phone or external id (--all-matching)")
    click.echo("suppressed: a later lead, stage or replay for them is acknowledged, recorded and never sent")
    click.echo(f"undo with: leadrelay unsuppress {done['ref']}")
    click.echo(done["sent_already"])


@click.command(short_help="Lift one forget's suppression.")
@click.argument("ref")
def unsuppress(ref: str):
    """Let a forgotten person's leads and stages be kept and sent again: REF is what
    `forget` answered (forget-...), also shown by `leadrelay audit`."""
    from workers.privacy import audit
    from workers.privacy.forget import unsuppress as run

    settings, _, connection = _context()
    lifted = run(connection, ref, *audit.cli_actor(), settings.audit_retention_days)
    click.echo(f"{ref}: {lifted} suppressed identifier(s) lifted" if lifted else f"{ref}: nothing suppressed under it")
    if not lifted:
        sys.exit(1)


@click.command("export-person", short_help="What is held about one person, as JSON.")
@person_options
def export_person(region, client, all_matching: bool, **options):
    """Everything held about one person, as hashes and ids (their right of access): the
    same lookup `forget` makes, changing nothing."""
    from workers.privacy import audit
    from workers.privacy.forget import SharedIdentifiers, export
    from workers.privacy.person import NoIdentifier

    settings, routes, connection = _context()
    try:
        datasets = _datasets(routes, client)
        found = export(connection, routes, _given(options), region or settings.default_region, datasets, all_matching)
    except (NoIdentifier, SharedIdentifiers) as err:
        raise click.UsageError(str(err)) from None
    audit.record(connection, *audit.cli_actor(), "export", settings.audit_retention_days, found=found["counts"])
    click.echo(json.dumps(found, indent=2, sort_keys=True))


@click.command("audit", short_help="Who replayed, purged, forgot or changed what.")
@click.option("--count", default=50, show_default=True, help="How many, newest first.")
@click.option("--action", help="Only this action (forget, unsuppress, export, replay, purge, stage_events).")
@click.option("--ref", help="Only the entries of this forget's reference (forget-...).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def audit_trail(count: int, action: str | None, ref: str | None, as_json: bool):
    """The audit trail: every replay, purge, forget, unsuppress and stage change posted,
    from the admin page, the APIs or this command, with who, from where and when; and how
    many requests changed nothing (counted per day, never listed)."""
    from workers.privacy import audit

    connection, _ = running_queue()
    entries = audit.entries(connection, count, action, ref)
    for entry in entries:
        click.echo(json.dumps(entry, sort_keys=True) if as_json else audit.line(entry))
    if as_json:
        return
    if not entries:
        click.echo("nothing audited yet" if not (action or ref) else "no entry matches")
    for what, number in audit.unchanged(connection).items() if not (action or ref) else ():
        click.echo(f"unchanged: {audit.escaped(what)}: {number} request(s) that changed nothing")
