"""Correctly signed samples sent to the running service: `send-test`."""

from __future__ import annotations

import json
import sys

import click

from workers.cli.common import LazyChoice, meta_said, running_queue, settings_or_exit
from workers.config import environment
from workers.sources.registry import CHAT_SOURCES, GOOGLE_SOURCES, SOURCES


def _failures() -> tuple[str, ...]:
    from workers.run.sendtest import FAILURES

    return FAILURES


def _sample(path: str):
    """A source's sandbox sample (the registry's `sample`), imported when it is run."""
    import importlib

    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


LAST_SENT = "send-test.json"  # the last sample lead, for `send-test stages`


@click.command("send-test", short_help="Send a signed sample to the running service.")
@click.argument(
    "what",
    type=click.Choice([*SOURCES, "google", "stages", "readiness"]),
)
@click.option(
    "--fail", type=LazyChoice(_failures), help="Sandbox, meta: make the lead fail this way (see README, The sandbox)."
)
@click.option(
    "--no-webhook", is_flag=True, help="Sandbox, meta: a lead Meta holds whose webhook never came (the sweep finds it)."
)
@click.option("--form-id", help="A real Meta app: the Lead Ads form to create Meta's test lead on.")
@click.option("--leadgen-id", help="stages: the lead to move (default: the last `send-test meta` lead).")
@click.option("--url", help="The service (default: where `leadrelay run` listens, from the data folder).")
def send_test(
    what: str, fail: str | None, no_webhook: bool, form_id: str | None, leadgen_id: str | None, url: str | None
):
    """Send a correctly signed sample to the running service and say what to look at.

    meta: in the sandbox, a lead in the stand-in and its signed leadgen webhook
    (--fail auth|invalid|transient|expired to see a paused token, a dead letter, a
    retry, the 7-day window; --no-webhook for a lead only the sweep finds); with a real
    Meta app, Meta's test lead on --form-id.
    typeform, tally: a signed submission. stages: QualifiedLead, Schedule and
    Purchase for the last sample lead, through the stage API. hubspot, pipedrive
    (sandbox): that lead's deal moved in the CRM, as the CRM's signed webhook.
    calendly, calcom (sandbox): that lead books a meeting. signed (sandbox): a
    Standard Webhooks POST moves that lead to StartTrial. readiness (sandbox): a
    month of a sample funnel, then `leadrelay readiness` shows Meta's gates.
    whatsapp, messenger, instagram (sandbox): a chat started from an ad, then its
    QualifiedLead and Purchase (and, for WhatsApp, a HubSpot deal won for its phone).
    google (googleads): a lead as Google's lead form webhook posts it, then its
    QualifiedLead, Schedule and Purchase: Google's events beside Meta's in the dry run.
    """
    import requests

    from workers.common.policy import JobError
    from workers.run import sendtest, supervisor

    what = GOOGLE_SOURCES[0] if what == "google" else what
    settings = settings_or_exit()
    data = environment.data_dir()
    running = supervisor.web_url(data)
    web = (url or (running[0] if running else "http://127.0.0.1:8000")).rstrip("/")
    if (fail or no_webhook) and (what != "meta" or not settings.sandbox):
        raise click.UsageError(
            "--fail and --no-webhook work with `send-test meta` in the sandbox (no Meta settings set)"
        )
    try:
        if what == "readiness":
            if not settings.sandbox:
                raise click.UsageError("send-test readiness is the sandbox's: live, `leadrelay readiness` shows yours")
            from workers.run import scenario

            connection, q = running_queue()
            result = scenario.run(settings, web, connection, q)
        elif what == "meta" and not settings.sandbox:
            if not form_id:
                raise click.UsageError("with a real Meta app, give --form-id: Meta's test lead is made on that form")
            result = sendtest.meta_test_lead(settings, form_id)
        elif what == "meta":
            result = sendtest.meta_lead(settings, web, fail, webhook=not no_webhook)
        elif what in CHAT_SOURCES or what in GOOGLE_SOURCES:
            if not settings.sandbox:
                live = "start a chat from one of your ads" if what in CHAT_SOURCES else "use the form's test button"
                raise click.UsageError(f"send-test {what} is the sandbox's: live, {live}")
            result = _sample(SOURCES[what].sample)(settings, web, what)
        elif what == "stages" or SOURCES[what].sample:
            last = data / LAST_SENT
            if not leadgen_id and settings.sandbox:
                # Each demo on a lead of its own: run in any order, none is a duplicate of another's stage.
                fresh = sendtest.meta_lead(settings, web)
                _settled("lead-meta-" + fresh["leadgen_id"])
                leadgen_id = fresh["leadgen_id"]
            leadgen_id = leadgen_id or (json.loads(last.read_text())["leadgen_id"] if last.is_file() else None)
            if not leadgen_id:
                raise click.UsageError("no sample lead yet: run `leadrelay send-test meta` first, or give --leadgen-id")
            if what != "stages":
                if not settings.sandbox:
                    raise click.UsageError(f"send-test {what} is the sandbox's: live, move a deal in {what}")
                result = _sample(SOURCES[what].sample)(settings, web, what, leadgen_id)
            elif not settings.api_token:
                raise click.UsageError("the stage API is off: set LEADRELAY_API_TOKEN")
            else:
                result = sendtest.stage_events(settings, web, leadgen_id)
        else:
            result = getattr(sendtest, f"{what}_submission")(settings, web)
    except requests.ConnectionError:
        raise click.ClickException(
            f"nothing answers at {web} (or at the Graph stand-in): is `{environment.start_command()}` running? "
            "(--url names another address)"
        ) from None
    except TimeoutError as err:
        raise click.ClickException(str(err)) from None
    except JobError as err:
        raise click.ClickException(meta_said(err)) from None
    # What was made first (a real Meta app's test lead exists now, whatever happens next);
    # the data folder need not exist where a live service keeps its Redis elsewhere.
    click.echo(json.dumps({k: v for k, v in result.items() if k != "next"}, sort_keys=True))
    if what == "meta" and result.get("leadgen_id"):
        data.mkdir(parents=True, exist_ok=True)
        (data / LAST_SENT).write_text(json.dumps({"leadgen_id": result["leadgen_id"]}) + "\n")
    if result.get("status", 200) >= 300:
        sys.exit(1)
    answer = result.get("answer") if isinstance(result.get("answer"), dict) else {}
    not_sent = sorted({item.get("reason", "?") for item in answer.get("skipped") or []})
    if answer and not answer.get("accepted") and not answer.get("duplicates") and not_sent:
        # Suppressed (a forgotten person), held (a Page not mapped), ignored: said here, not `job: done`.
        click.echo(f"not sent: {', '.join(not_sent)} (`leadrelay ignored` lists it)")
    elif settings.sandbox and what == "meta" and not no_webhook:
        settled = _settled("lead-meta-" + result["leadgen_id"])
        click.echo(f"job: {settled}{_not_kept(result['leadgen_id']) if settled == 'done' and not fail else ''}")
        if fail == "auth":  # a second lead, to see a job waiting on the paused token
            second = sendtest.meta_lead(settings, web)
            click.echo(f"second lead {second['leadgen_id']}: {_settled('lead-meta-' + second['leadgen_id'])}")
    click.echo(f"next: {result['next']}")


def _not_kept(leadgen_id: str) -> str:
    """Said after `done` when the sandbox kept no Lead event for it: a forgotten person's
    lead is read and then set aside, never kept (`leadrelay ignored` counts it)."""
    from workers.events import ledger

    connection, _ = running_queue()
    if ledger.kept_before(connection, [f"meta:{leadgen_id}:Lead"])[0]:
        return ""
    return ", but no Lead event was kept: its person is suppressed (a forget), see `leadrelay ignored`"


def _settled(job_id: str, timeout: float = 15.0) -> str:
    """Where the job stands once the worker has had a go at it (or after `timeout`)."""
    import time

    from rq.exceptions import NoSuchJobError
    from rq.job import Job, JobStatus

    from workers.intake import inbox

    connection, q = running_queue()
    deadline = time.monotonic() + timeout
    status = "not found"
    while time.monotonic() < deadline:
        try:
            job = Job.fetch(job_id, connection=connection, serializer=q.serializer)
            status = job.get_status()
        except NoSuchJobError:  # no job of its own: it went in a batch, unless it still waits
            status = inbox.state(connection, job_id)
        if status in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.SCHEDULED, JobStatus.STOPPED):
            break
        time.sleep(0.2)
    status = getattr(status, "value", status)
    return {"finished": "done", "failed": "dead-lettered", "scheduled": "waiting (a retry, or a paused token)"}.get(
        status, status
    )
