"""Every RQ job by name: the one place a job is named, importing nothing.

Notes: docs/internals/workers.md
"""

from __future__ import annotations

PROCESS_META_LEAD = "workers.jobs.process_meta_lead"  # a Lead Ads lead on its own (after a batch handed it off)
SEND_FORM_LEAD = "workers.jobs.send_form_lead"  # a Typeform or Tally submission on its own
SEND_STAGE_EVENTS = "workers.jobs.send_stage_events"  # a batch of stage events from the stage API
READ_CRM_STAGE = "workers.jobs.read_crm_stage"  # a CRM's stage change on its own: its person read back
DRAIN = "workers.jobs.drain"  # new leads from the inbox, many at a time
RETRY_BATCH = "workers.jobs.retry_batch"  # leads whose whole batch request failed for a passing reason
SWEEP = "workers.jobs.run_sweep"  # the scheduled re-read of every form's leads
WATCH = "workers.jobs.watch_tokens"  # the scheduled check of tokens' expiry and Pages' subscriptions
PRIVACY_REQUEST = "workers.jobs.privacy_request"  # a forget or export taken by the API or the admin page

NAMES = (
    PROCESS_META_LEAD,
    SEND_FORM_LEAD,
    SEND_STAGE_EVENTS,
    READ_CRM_STAGE,
    DRAIN,
    RETRY_BATCH,
    SWEEP,
    WATCH,
    PRIVACY_REQUEST,
)
FORMER = {
    "workers.batches.drain": DRAIN,
    "workers.batches.retry_batch": RETRY_BATCH,
    "workers.sweep.run_sweep": SWEEP,
}


def current(path: str) -> str:
    """The name a stored path stands for today (itself, or what replaced it)."""
    return FORMER.get(path, path)


def resolve(path: str):
    """The function a stored path stands for today, looked up by its dotted name (a shim
    calls it: no import of the jobs at the shim's own layer)."""
    import importlib

    module, _, name = current(path).rpartition(".")
    return getattr(importlib.import_module(module), name)
