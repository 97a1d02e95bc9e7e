"""What was sent or kept: dry-run events and match-key coverage."""

from __future__ import annotations

import json

import click

from workers.cli.common import running_queue


@click.command("dry-run", short_help="Show events kept instead of sent.")
@click.option("-n", "--count", default=10, show_default=True, help="How many of the newest events to show.")
@click.option(
    "--dataset",
    help="Only this dataset's (its name in the mapping file; `default`: the environment's; "
    "`google:<name>`: a Google destination's).",
)
def dry_run(count: int, dataset: str | None):
    """Show the newest events built while no CAPI token (or, for Google, no service account)
    was set (JSON, one per line). A Google destination's are named `google:<name>`."""
    from workers.graphapi import capi

    connection, _ = running_queue()
    kept = capi.last_dry_run(connection, count, dataset)
    if not kept:
        click.echo("no dry-run events kept", err=True)
    for item in _why_again(kept):
        click.echo(json.dumps(item, sort_keys=True))


AGAIN = (
    "kept again: in dry run Meta (or Google) never confirms a lead's Lead, so it goes ahead of each later "
    "stage event for that lead (live, once it is confirmed, it is sent once)"
)


def _why_again(kept: list[dict]) -> list[dict]:
    """Newest first, as kept; an event whose event_id an older line already shows says why
    it is there again."""
    seen: set[str] = set()
    out = []
    for item in reversed(kept):
        event_id = (item.get("event") or {}).get("event_id")
        out.append({**item, "again": AGAIN} if event_id in seen else item)
        seen.add(event_id)
    return out[::-1]


@click.command(short_help="Share of events carrying each match key.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of tables.")
def coverage(as_json: bool):
    """Which match keys each event name carries: since the counters began, and lately."""
    from workers.common import counters
    from workers.identity import matchkeys

    connection, _ = running_queue()
    tables = {
        "since the counters began": counters.coverage(counters.read(connection)),
        f"the last {counters.RECENT_KEEP} events": counters.recent_coverage(counters.recent(connection)),
    }
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
