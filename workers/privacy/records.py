"""Every kind of record leadrelay keeps in Redis: what it holds, why, and for how long.

Notes: docs/internals/privacy.md
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass


@dataclass(frozen=True)
class Record:
    pattern: str  # the key, as a glob (`leadrelay:` included, or RQ's `rq:`)
    kind: str  # what forget and export call it
    holds: str  # what is in it: hashed, ids, counts
    kept: str  # for how long, and the setting that changes it
    expires: bool  # every key of it has a TTL; False: `kept` says why not
    person: bool = False  # it can hold a person's hashes or ids (forget looks in it)


RECORDS = (
    Record(
        "leadrelay:profile:*",
        "profile",
        "hashed match keys (a Google lead's: Google's too, and its click id), lead_id, page/form/ad ids",
        "90 days (LEADRELAY_PROFILE_RETENTION_DAYS)",
        True,
        True,
    ),
    Record(
        "leadrelay:profile-by:*",
        "profile lookup",
        "a hashed email, phone or external id (in the key) -> the profile's key",
        "as its profile",
        True,
        True,
    ),
    Record(
        "leadrelay:chat:*",
        "chat",
        "a chat an ad started: channel ids (WABA, Page or IG account; BSUID, PSID or IGSID), ad clicks, hashed phone",
        "90 days (LEADRELAY_PROFILE_RETENTION_DAYS)",
        True,
        True,
    ),
    Record(
        "leadrelay:chat-by:*",
        "chat lookup",
        "a hashed phone (in the key) -> the chat's key",
        "as its chat",
        True,
        True,
    ),
    Record(
        "leadrelay:lead-event:*",
        "lead event",
        "a Lead event as built (hashed match keys, lead_id)",
        "until Meta's 7-day window for it closes",
        True,
        True,
    ),
    Record(
        "leadrelay:confirmed:*",
        "ledger entry",
        "an event_id Meta accepted (names the lead) and Meta's fbtrace_id, or Google's request id",
        "8 days",
        True,
        True,
    ),
    Record(
        "leadrelay:kept:*",
        "dry-run mark",
        "an event_id (names the lead) a dry run kept: the funnel counted it once",
        "8 days",
        True,
        True,
    ),
    Record(
        "leadrelay:stage:*",
        "stage claim",
        "an event_id (names the lead): that stage was sent once",
        "90 days",
        True,
        True,
    ),
    Record(
        "leadrelay:person:*",
        "person index entry",
        "a lead's id or a hash's first half (in the key) -> its stage event ids, batch job ids, profiles",
        "90 days from its last entry, or its profiles' retention if longer",
        True,
        True,
    ),
    Record(
        "leadrelay:person-index",
        "person index backfill",
        "where indexing what was kept before the index stands: a cursor, a count, a time",
        "for the service's life",
        False,
    ),
    Record(
        "leadrelay:google-requests",
        "Google requests to read",
        "Google's request ids, each with when its status is read next",
        "until Google says what it made of it (at most 3 days)",
        False,
    ),
    Record(
        "leadrelay:google-request:*",
        "Google request status",
        "a request Google accepted: its destination, its events counted by name, the batch job "
        "that sent it (never a lead's own), what Google reported: counts by reason",
        "8 days",
        True,
    ),
    Record("leadrelay:seen:*", "dedupe record", "a lead's job id (names the lead)", "7 days", True, True),
    Record(
        "leadrelay:inbox",
        "inbox entry",
        "new leads waiting for a drain job: ids, hashed form answers",
        "until taken (seconds); a stream, trimmed as taken",
        False,
        True,
    ),
    Record(
        "leadrelay:inbox:*",
        "inbox bookkeeping",
        "drain slots, consumers, retry counts by entry id",
        "minutes; the tries hash until its entry is acknowledged",
        False,
    ),
    Record(
        "leadrelay:dead", "dead-letter index", "job ids (name the lead) by time", "as the dead letters", False, True
    ),
    Record(
        "leadrelay:dead:*",
        "dead letter",
        "why a job failed, its ids, hashed match keys",
        "while RQ keeps its failed job (30 days); IP and user agent 7 (LEADRELAY_DEAD_LETTER_RETENTION_DAYS)",
        False,
        True,
    ),
    Record(
        "leadrelay:dead-reasons",
        "dead-letter reason",
        "job id (names the lead) -> its reason and dataset",
        "as the dead letters",
        False,
        True,
    ),
    Record(
        "leadrelay:dead-waiting",
        "dead-letter index",
        "job ids waiting on a paused token",
        "until the token is resumed",
        False,
        True,
    ),
    Record(
        "leadrelay:dead-pass",
        "dead-letter housekeeping",
        "where the prune and the scrub of dead letters stand: a cursor and a time",
        "for the service's life",
        False,
    ),
    Record(
        "leadrelay:quarantine",
        "quarantined entry",
        "inbox entries too broken to run (ids, hashed answers)",
        "30 days",
        True,
        True,
    ),
    Record("leadrelay:recovering:*", "recovery claim", "a job id a worker is settling", "minutes", True, True),
    Record(
        "leadrelay:ignored",
        "ignored delivery",
        "what was acknowledged and not sent: reason and ids",
        "the newest 1,000",
        False,
        True,
    ),
    Record(
        "leadrelay:held",
        "held lead",
        "Lead Ads lead ids from a Page not in the mapping file",
        "until the Page is mapped and `leadrelay ignored --release` sends them",
        False,
        True,
    ),
    Record(
        "leadrelay:accuracy:*",
        "accuracy flag",
        "lead ids per form and day: came by webhook or by sweep; counts per form, Page, dataset and day",
        "8 days",
        False,
        True,
    ),
    Record(
        "leadrelay:dry-run:events",
        "dry-run event",
        "events kept instead of sent (hashed match keys, lead_id)",
        "the newest LEADRELAY_DRY_RUN_KEEP",
        False,
        True,
    ),
    Record(
        "leadrelay:recent-events",
        "recent event",
        "the last events sent: names, times, counts, the lead's id",
        "the newest few hundred",
        False,
        True,
    ),
    Record(
        "leadrelay:metrics",
        "counter",
        "counts by source, reason and event: names nobody",
        "for the service's life (Prometheus reads them)",
        False,
    ),
    Record("leadrelay:funnel:*", "funnel count", "counts and days per stage: names nobody", "400 days", False),
    Record("leadrelay:stagelag:*", "stage lag", "when each stage source last posted", "for the service's life", False),
    Record(
        "leadrelay:sweep:*",
        "sweep state",
        "form ids and times read up to",
        "for the service's life; the lock, minutes",
        False,
    ),
    Record(
        "leadrelay:watch*",
        "watch state",
        "the watch's findings (token expiry, silent Pages)",
        "for the service's life; said-today marks a day",
        False,
    ),
    Record(
        "leadrelay:page-dataset", "Page setup", "Page id -> where its leads first went", "for the service's life", False
    ),
    Record(
        "leadrelay:pause*",
        "token pause",
        "a refused token's fingerprint and the jobs waiting on it",
        "until resumed",
        False,
        True,
    ),
    Record("leadrelay:auth-failures:*", "failed login count", "wrong tokens per address", "minutes", True),
    Record("leadrelay:sandbox-samples", "sample count", "how many sample people the sandbox made", "30 days", True),
    Record("leadrelay:admin-session:*", "admin session", "a logged-in admin page session", "8 hours", True),
    Record(
        "leadrelay:replicated", "replication mark", "one counter WAIT is measured from", "for the service's life", False
    ),
    Record(
        "leadrelay:api-version-warning",
        "version warning",
        "the Graph API version Meta said it served",
        "until the version changes",
        False,
    ),
    Record("leadrelay:scrape:*", "metrics cache", "figures for /metrics", "seconds", True),
    Record("leadrelay:sandbox", "sandbox mark", "this Redis is the local sandbox's", "for the sandbox's life", False),
    Record(
        "leadrelay:suppressed",
        "suppression",
        "a forgotten person's hashes (never raw), per dataset",
        "until `leadrelay unsuppress`: it is what keeps them forgotten",
        False,
    ),
    Record(
        "leadrelay:privacy-requests",
        "privacy request list",
        "the newest requests' references (the admin page)",
        "the newest 100",
        False,
    ),
    Record(
        "leadrelay:privacy-request:*",
        "privacy request",
        "a forget's or export's state; until its worker runs, the person's hashed identifiers and ids; an export's "
        "result (hashes and ids)",
        "the state 7 days; an export's result an hour",
        True,
    ),
    Record(
        "leadrelay:audit:unchanged",
        "audit count",
        "per day, action and caller (a token fingerprint): requests that changed nothing",
        "365 days (LEADRELAY_AUDIT_RETENTION_DAYS)",
        True,
    ),
    Record(
        "leadrelay:audit",
        "audit entry",
        "who changed what, from where: token fingerprints, ids named, counts",
        "365 days (LEADRELAY_AUDIT_RETENTION_DAYS), at most 200,000 entries",
        False,
    ),
    Record(
        "rq:job:*",
        "job",
        "a job's argument: ids and hashed match keys",
        "a day once done, 30 days once failed; while waiting, until it runs",
        False,
        True,
    ),
    Record(
        "rq:*", "job queue", "RQ's queues and registries: job ids (name the lead)", "RQ's own: as its jobs", False, True
    ),
)


def counted(number: int, kind: str) -> str:
    """`1 profile`, `2 profile lookups`, `3 inbox entries`: what forget removed, as said."""
    if number == 1:
        return f"1 {kind}"
    return f"{number} {kind[:-1]}ies" if kind.endswith("y") else f"{number} {kind}s"


def record_of(key: str) -> Record | None:
    """The table's row for a key: the first that matches (the specific before the general)."""
    return next((record for record in RECORDS if fnmatch.fnmatchcase(key, record.pattern)), None)
