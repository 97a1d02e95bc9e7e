"""A lead a batch could not finish gets an RQ job of its own: its retry, its wait for a
token, or its dead letter, exactly as if it had always been alone.

The job is the one a lead always had (`lead-meta-<id>`, running jobs.process_meta_lead
or jobs.send_form_lead), made after its first attempt, which the batch was. Its retries,
dead letter and replay are then the single-lead path's, untouched.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from rq import Queue
from rq.job import JobStatus
from rq.registry import FailedJobRegistry
from rq.results import Result

from . import deadletters, policy
from .attempts import settle
from .work import Work


@dataclass
class Lead:
    """One inbox entry a drain job works on."""
    entry_id: str
    job_id: str
    function: str  # the RQ job function it runs when it needs a job of its own
    argument: dict
    request_id: str | None
    source: str
    key: str
    event_id: str
    event_name: str
    dataset: str

    def work(self, event_time: int | None) -> Work:
        return Work(job_id=self.job_id, source=self.source, key=self.key, event_name=self.event_name,
                    event_id=self.event_id, event_time=event_time, args=self.argument,
                    request_id=self.request_id, dataset=self.dataset)


def hand_off(ctx, queue: Queue, lead: Lead, err: Exception, event_time: int | None, started: float) -> str:
    """Give `lead` its own job after a failed first attempt (`err`: DeliveryError or
    Paused); the outcome: retry, waiting_for_token or dead_letter."""
    now = time.time()
    meta = {"attempts": 1, "first_attempt_at": now, "last_attempt_at": now,
            **({"request_id": lead.request_id} if lead.request_id else {})}
    delay = settle(ctx.connection, ctx.graph, lead.work(event_time), meta, err, ctx.settings.retry_base_seconds,
                   started, queue)
    job = queue.create_job(lead.function, args=(lead.argument,), job_id=lead.job_id, result_ttl=policy.RESULT_TTL,
                           failure_ttl=policy.FAILURE_TTL, description=f"{lead.source} {lead.key}", meta=meta)
    job.origin = queue.name
    if delay is None:
        record = deadletters.get(ctx.connection, lead.job_id) or {}
        failure = f"{record.get('reason')}: {record.get('detail')}"
        job._status = JobStatus.FAILED
        job.save()
        Result.create_failure(job, policy.FAILURE_TTL, failure)
        FailedJobRegistry(queue=queue).add(job, ttl=policy.FAILURE_TTL, exc_string=failure)
        return "dead_letter"
    if delay:
        queue.schedule_job(job, datetime.now(timezone.utc) + timedelta(seconds=delay))
    else:  # the token's pause was just lifted: run now
        queue.enqueue_job(job)
    return "retry" if meta["attempts"] else "waiting_for_token"
