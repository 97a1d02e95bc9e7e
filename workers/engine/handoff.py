"""A lead a batch could not finish gets an RQ job of its own: its retry, its wait for a
token, or its dead letter, exactly as if it had always been alone.

Notes: docs/internals/engine.md
"""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import timedelta

from rq import Queue

from workers import jobnames
from workers.common import clock, logs, policy
from workers.common.policy import Paused
from workers.engine.attempts import closed, count, settle
from workers.engine.context import Context
from workers.engine.inflight import Failed
from workers.events import conversions
from workers.failures import deadletters
from workers.graphapi.pauses import Pauses

log = logs.get(__name__)


def hand_off(ctx: Context, queue: Queue, failure: Failed, started: float) -> str:
    """Give the lead its own job after a failed first attempt (`failure.error`:
    JobError or Paused); the outcome: retry, waiting_for_token or dead_letter."""
    lead, now = failure.lead, clock.now()
    meta = {
        "attempts": lead.attempts + 1,
        "first_attempt_at": now,
        "last_attempt_at": now,
        **({"request_id": lead.request_id} if lead.request_id else {}),
    }
    delay, record = settle(
        ctx.connection, ctx.graph, lead, meta, failure.error, ctx.settings.retry_base_seconds, started, queue
    )
    job = queue.create_job(
        lead.function,
        args=(lead.args,),
        job_id=lead.job_id,
        result_ttl=policy.RESULT_TTL,
        failure_ttl=policy.FAILURE_TTL,
        description=f"{lead.source} {lead.key}",
        meta=meta,
    )
    job.origin = queue.name
    if record is not None:
        deadletters.store(queue, job, f"{record['reason']}: {record['detail']}")
        return "dead_letter"
    if delay:
        queue.schedule_job(job, clock.utcnow() + timedelta(seconds=delay))
    else:  # the token's pause was just lifted: run now
        queue.enqueue_job(job)
    return "retry" if meta["attempts"] else "waiting_for_token"


def retry_together(ctx: Context, queue: Queue, failures: list[Failed], started: float) -> Counter:
    """Leads whose request failed as a whole for a passing reason (transient, throttled,
    a paused token) go on together: one RQ job (jobnames.RETRY_BATCH) takes them again
    after the delay the policy gives the attempt, or when the token's pause lifts. Those
    the policy gives up on (too many attempts, Meta's 7 days) get their own job and dead
    letter, and so does a lead alone. Outcomes counted."""
    outcomes: Counter = Counter()
    groups: dict[int, list[Failed]] = {}  # the leads of one failed request share its error
    for failure in failures:
        groups.setdefault(id(failure.error), []).append(failure)
    for group in groups.values():
        err, now = group[0].error, clock.now()
        if isinstance(err, Paused):  # past Meta's window: dead-lettered now, not kept for the token
            for failure in [failure for failure in group if closed(failure.lead.event_time)]:
                outcomes[hand_off(ctx, queue, failure, started)] += 1
                group.remove(failure)
            if not group:
                continue
        leads, resumed = [failure.lead for failure in group], False
        if isinstance(err, Paused):
            # A batch meets a pause as a lone job does: due, the token is retested here
            # (else a stream of leads kept it paused for ever: only lone leads retested).
            resumed = Pauses(ctx.connection).retest(err.fingerprint, ctx.graph.probe, queue)
            delay = 0 if resumed else policy.PAUSE_RECHECK_SECONDS
            attempts = max(lead.attempts for lead in leads)
        else:
            attempts = max(lead.attempts for lead in leads) + 1
            oldest = min((lead.event_time for lead in leads if lead.event_time), default=now)
            delay = policy.decide(
                err, attempts, conversions.deadline(oldest), now, base=ctx.settings.retry_base_seconds
            ).retry_in
        if delay is None or len(group) == 1 and not resumed:  # a lone lead simply has its own job
            for failure in group:
                outcomes[hand_off(ctx, queue, failure, started)] += 1
            continue
        job = queue.create_job(
            jobnames.RETRY_BATCH,
            args=({"entries": [{**lead.entry, "n": attempts} for lead in leads]},),
            job_id=f"batch-{uuid.uuid4().hex[:16]}",
            result_ttl=0,
            failure_ttl=policy.FAILURE_TTL,
            timeout=policy.DRAIN_JOB_TIMEOUT,
            description=f"retry {len(leads)} leads together (attempt {attempts + 1})",
        )
        job.origin = queue.name
        if delay:
            queue.schedule_job(job, clock.utcnow() + timedelta(seconds=delay))
        else:  # the token's pause was just lifted: run now
            queue.enqueue_job(job)
        outcome = "waiting_for_token" if isinstance(err, Paused) else "retry"
        if isinstance(err, Paused) and delay:
            Pauses(ctx.connection).wait(err.fingerprint, job.id)
        count(
            ctx.connection, Counter(lead.source for lead in leads), outcome, err.reason if outcome == "retry" else None
        )
        log.warning(
            "batch_retry",
            job_id=job.id,
            leads=len(leads),
            job_ids=[lead.job_id for lead in leads],
            outcome=outcome,
            retry_in=delay,
            attempt=attempts,
            **({"fingerprint": err.fingerprint} if isinstance(err, Paused) else err.as_dict()),
        )
        outcomes[outcome] += len(leads)
    return outcomes
