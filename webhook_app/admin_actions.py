"""The admin page's actions on dead letters: replay (one, or a reason group) and purge
(the `expired` group, which can never be sent), each from a logged-in session's own form,
then back to the page with what happened."""

from __future__ import annotations

from flask import abort, flash, redirect, request, url_for

from workers.common import logs
from workers.failures import advice, deadletters
from workers.failures.replay import run_replay
from workers.privacy import audit, requests
from workers.privacy import forget as privacy
from workers.privacy.person import NoIdentifier

from . import audittrail
from .adminsession import bp, check_form, ext

log = logs.get(__name__)


@bp.post("/dead-letters/replay")
def replay():
    """Replay one dead letter (job_id) or a reason group (reason), then back to the page."""
    check_form()
    job_id, reason = request.form.get("job_id"), request.form.get("reason")
    dataset = request.form.get("dataset") or None  # the page's dataset filter: its group only
    if bool(job_id) == bool(reason):
        abort(400, "give a job_id or a reason")
    where = deadletters.Filter(job_ids=(job_id,)) if job_id else deadletters.Filter(reason=reason, dataset=dataset)
    result = run_replay(ext()["redis"], ext()["queue"], where)
    log.info("admin_replay", job_id=job_id, reason=reason, dataset=dataset, **result["counts"], woken=result["woken"])
    audittrail.note("replay", **audit.selection(where), **result["counts"])
    flash(_replay_message(result), "error" if result["counts"]["failed"] else "ok")
    return redirect(url_for("admin_page.page", **({"dataset": dataset} if dataset else {})) + "#dead-letters", code=303)


@bp.post("/dead-letters/purge")
def purge():
    """Delete a group that can never be sent (`expired`) for good, then back to the page."""
    check_form()
    reason, dataset = request.form.get("reason"), request.form.get("dataset") or None
    if reason not in advice.NOT_REPLAYABLE:
        abort(400, "only a group that can never be sent is purged here; replay the others")
    entries = deadletters.select(ext()["redis"], ext()["queue"], deadletters.Filter(reason=reason, dataset=dataset))
    for entry in entries:
        deadletters.purge(ext()["redis"], ext()["queue"], entry["job_id"])
    log.info("admin_purge", reason=reason, dataset=dataset, purged=len(entries))
    audittrail.note("purge", reason=reason, **({"dataset": dataset} if dataset else {}), purged=len(entries))
    flash(f"Purged {len(entries)} {reason} dead letter(s): they could never be sent.", "ok")
    return redirect(url_for("admin_page.page", **({"dataset": dataset} if dataset else {})) + "#dead-letters", code=303)


@bp.post("/people/forget")
def forget():
    """Forget one person (every dataset: the admin is the operator): suppressed at once, their
    records removed by a worker (privacy/requests.py); back to the page, which shows its state."""
    check_form()
    given = {name: request.form.get(name) for name in ("email", "phone", "lead_id", "external_id", "person_id")}
    try:
        taken = requests.accept(
            ext()["redis"],
            ext()["queue"],
            ext()["routes"],
            given,
            ext()["settings"].default_region,
            sorted(ext()["routes"].datasets),
            "forget",
            audittrail.actor(),
            request.remote_addr or "unknown",
            ext()["settings"].audit_retention_days,
            all_matching=request.form.get("all_matching") == "1",
        )
    except NoIdentifier as err:
        flash(str(err), "error")
    else:
        flash(
            f"Forget {taken['ref']} accepted: suppressed from now on; a worker removes their records "
            f"(its state is below). {privacy.SENT_ALREADY}",
            "ok",
        )
    return redirect(url_for("admin_page.page") + "#privacy", code=303)


def _replay_message(result: dict) -> str:
    counts = result["counts"]
    parts = [f"{counts['requeued']} requeued"]
    for outcome, text in (
        ("already_delivered", "already delivered (dropped)"),
        ("expired", "past the 7-day window (kept as expired)"),
        ("failed", "failed"),
    ):
        if counts[outcome]:
            parts.append(f"{counts[outcome]} {text}")
    if result.get("woken"):
        parts.append(f"{result['woken']} waiting on the token woken")
    return "Replay: " + ", ".join(parts) + "."
