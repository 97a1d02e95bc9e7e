"""A lead a batch could not finish gets an RQ job of its own: its retry, its wait for a
token, or its dead letter, exactly as if it had always been alone.

The job is the one a lead always had (`lead-meta-<id>`, running jobs.process_meta_lead
or jobs.send_form_lead), made after its first attempt, which the batch was. Its retries,
dead letter and replay are then the single-lead path's, untouched.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from rq import Queue

from workers import jobnames
from workers.common import clock, logs, policy
from workers.common.policy import Paused
from workers.config.routing import dataset_of
from workers.engine.attempts import count, settle
from workers.engine.jobwork import Work
from workers.events import conversions
from workers.failures import deadletters
from workers.graphapi.pauses import Pauses

log = logs.get(__name__)


@dataclass
class Lead:
    """One inbox entry a drain job works on."""

    entry_id: str | None  # None: it came in a retry batch, not from the inbox
    job_id: str
    function: str  # the RQ job function it runs when it needs a job of its own
    argument: dict
    request_id: str | None
    source: str
    key: str
    event_id: str
    event_name: str
    dataset: str
    attempts: int = 0  # tries so far, as part of a batch
    entry: dict | None = None  # the inbox entry, as stored

    @classmethod
    def of_entry(cls, entry_id: str | None, entry: dict) -> "Lead":
        """The lead an inbox entry (or a retry batch's entry) holds."""
        argument = entry["arg"]
        dataset = dataset_of(argument.get("route"))
        if "leadgen_id" in argument:
            key = argument["leadgen_id"]
            return cls(
                entry_id,
                entry["id"],
                entry["fn"],
                argument,
                entry.get("rid"),
                "meta",
                key,
                conversions.event_id("meta", key, conversions.LEAD),
                conversions.LEAD,
                dataset,
                entry.get("n", 0),
                entry,
            )
        return cls(
            entry_id,
            entry["id"],
            entry["fn"],
            argument,
            entry.get("rid"),
            argument["source"],
            argument["key"],
            argument["event_id"],
            argument["event_name"],
            dataset,
            entry.get("n", 0),
            entry,
        )

    def work(self, event_time: int | None) -> Work:
        return Work(
            job_id=self.job_id,
            source=self.source,
            key=self.key,
            event_name=self.event_name,
            event_id=self.event_id,
            event_time=event_time,
            args=self.argument,
            request_id=self.request_id,
            dataset=self.dataset,
        )


def hand_off(ctx, queue: Queue, lead: Lead, err: Exception, event_time: int | None, started: float) -> str:
    """Give `lead` its own job after a failed first attempt (`err`: DeliveryError or
    Paused); the outcome: retry, waiting_for_token or dead_letter."""
    now = clock.now()
    meta = {
        "attempts": lead.attempts + 1,
        "first_attempt_at": now,
        "last_attempt_at": now,
        **({"request_id": lead.request_id} if lead.request_id else {}),
    }
    delay, record = settle(
        ctx.connection, ctx.graph, lead.work(event_time), meta, err, ctx.settings.retry_base_seconds, started, queue
    )
    job = queue.create_job(
        lead.function,
        args=(lead.argument,),
        job_id=lead.job_id,
        result_ttl=policy.RESULT_TTL,
        failure_ttl=policy.FAILURE_TTL,
        description=f"{lead.source} {lead.key}",
        meta=meta,
    )
    job.origin = queue.name
    if record is not None:
        deadletters.park(queue, job, f"{record['reason']}: {record['detail']}")
        return "dead_letter"
    if delay:
        queue.schedule_job(job, clock.utcnow() + timedelta(seconds=delay))
    else:  # the token's pause was just lifted: run now
        queue.enqueue_job(job)
    return "retry" if meta["attempts"] else "waiting_for_token"


def later(ctx, queue: Queue, failed: list[tuple[Lead, Exception, int | None]], started: float) -> Counter:
    """Leads whose request failed as a whole for a passing reason (transient, throttled,
    a paused token) go on together: one RQ job (jobnames.RETRY_BATCH) takes them again
    after the delay the policy gives the attempt, or when the token's pause lifts. Those
    the policy gives up on (too many attempts, Meta's 7 days) get their own job and dead
    letter, and so does a lead alone. Outcomes counted."""
    outcomes: Counter = Counter()
    groups: dict[int, list] = {}
    for item in failed:
        groups.setdefault(id(item[1]), []).append(item)
    for group in groups.values():
        err, now = group[0][1], clock.now()
        leads = [lead for lead, _, _ in group]
        if isinstance(err, Paused):
            delay, attempts = policy.PAUSE_RECHECK_SECONDS, max(lead.attempts for lead in leads)
        else:
            attempts = max(lead.attempts for lead in leads) + 1
            oldest = min((t for _, _, t in group if t), default=now)
            delay = policy.decide(
                err, attempts, conversions.deadline(oldest), now, base=ctx.settings.retry_base_seconds
            ).retry_in
        if delay is None or len(group) == 1:  # a lone lead simply has its own job
            for lead, lead_err, event_time in group:
                outcomes[hand_off(ctx, queue, lead, lead_err, event_time, started)] += 1
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
        queue.schedule_job(job, clock.utcnow() + timedelta(seconds=delay))
        outcome = "waiting_for_token" if isinstance(err, Paused) else "retry"
        if isinstance(err, Paused):
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
