"""Every kind of record has a retention: a run that writes nearly every kind (a Lead Ads
lead, a form, stages, a dead letter, an ignored and a held delivery, an admin login and a
wrong token, a forget), then every key in Redis is matched to its row in the records table
(workers/privacy/records.py), and a key its row says expires must have a TTL. The rows
docs/privacy.md shows are the table's."""

from __future__ import annotations

import re

from helpers import PRIVACY_ADMIN as ADMIN
from helpers import PRIVACY_API as API
from helpers import ROOT, privacy_run
from workers.privacy.records import RECORDS, record_of


def test_every_key_a_run_writes_has_a_row_and_a_ttl_where_its_row_says(env, monkeypatch, graph, work, redis_conn):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("LEADRELAY_API_TOKEN", API)
    monkeypatch.setenv("LEADRELAY_ADMIN_COOKIE_SECURE", "false")
    privacy_run(create_app().test_client(), graph, work)
    keys = sorted(k.decode() for k in redis_conn.scan_iter(match="*", count=1000))
    assert len(keys) > 30, keys  # the run wrote what it meant to
    unlisted = [key for key in keys if record_of(key) is None]
    assert unlisted == []
    forever = [k for k in keys if record_of(k).expires and redis_conn.ttl(k) < 0]
    assert forever == []
    kinds = {record_of(k).kind for k in keys}
    wanted = ("profile", "profile lookup", "ledger entry", "stage claim", "dedupe record", "dead letter", "suppression")
    assert set(wanted) <= kinds, set(wanted) - kinds


def test_a_row_that_says_a_key_expires_is_caught_when_it_does_not(redis_conn):
    redis_conn.set("leadrelay:profile:meta:1", "{}")  # a profile written with no TTL
    assert record_of("leadrelay:profile:meta:1").expires and redis_conn.ttl("leadrelay:profile:meta:1") == -1
    assert record_of("leadrelay:no-such-kind") is None


def test_the_docs_show_every_row_of_the_table():
    doc = (ROOT / "docs" / "privacy.md").read_text()
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([^`]+)` \|.*$", doc, re.M)}
    assert sorted(rows) == sorted(r.pattern for r in RECORDS)
    for record in RECORDS:
        row = rows[record.pattern]
        assert f"| {record.kind} | {record.holds} | {record.kept} |" in row
        assert row.endswith(f"| {'yes' if record.expires else 'no'} | {'yes' if record.person else 'no'} |")


def test_what_forget_removed_is_said_in_words_a_person_reads():
    from workers.privacy.records import counted

    assert [counted(1, "profile"), counted(2, "profile lookup"), counted(3, "inbox entry")] == [
        "1 profile",
        "2 profile lookups",
        "3 inbox entries",
    ]
