"""`leadrelay crm-stages`: a CRM's pipelines and stages with their ids, and what each is
mapped to, to fill the mapping file's `[crm.<source>.stages]` table."""

from __future__ import annotations

import sys

import click

from workers.cli.common import mapping_or_exit, settings_or_exit
from workers.sources.registry import READ_BACK


@click.command("crm-stages", short_help="List a CRM's stage ids and what each is mapped to.")
@click.argument("crm", type=click.Choice(READ_BACK))
def crm_stages(crm: str):
    """Read CRM's pipelines and stages with its API token (the CRM's page in docs/ names
    the setting: CLOSE_API_KEY, HUBSPOT_ACCESS_TOKEN...) and print each stage id, its name,
    and the event it is mapped to in the mapping file's [crm.<source>.stages] (or
    `unmapped`: recorded, never sent)."""
    from workers.common.policy import JobError, Paused
    from workers.crmapi.clients import CLIENTS

    settings = settings_or_exit()
    table = mapping_or_exit(settings)["crm"][crm]["stages"]
    try:
        rows = CLIENTS[crm](settings).stages()
    except (JobError, Paused) as err:
        click.echo(f"leadrelay: {crm} refused: {err}", err=True)
        sys.exit(1)
    width = max((len(stage) for _, stage, _ in rows), default=8)
    for where, stage, label in rows:
        click.echo(f"{stage:<{width}}  {table.get(stage, 'unmapped'):<14}  {label}  ({where})")
    unmapped = [stage for _, stage, _ in rows if stage not in table]
    if unmapped:
        click.echo(f"\n{len(unmapped)} unmapped: add them to [crm.{crm}.stages] in the mapping file to send them")
