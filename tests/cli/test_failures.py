"""`leadrelay ignored` lists the newest items kept, and says how many there were in all."""

from helpers import leadrelay
from workers.intake import admission


def test_ignored_says_it_lists_the_newest_and_counts_them_all(env, redis_conn):
    admission.record_ignored(redis_conn, "typeform", [{"reason": "unknown_form"}] * (admission.IGNORED_KEEP + 5))
    shown = leadrelay("ignored", "-n", "3")
    assert len(shown.stdout.splitlines()) == 3
    assert redis_conn.llen(admission.IGNORED) == admission.IGNORED_KEEP
    assert f"the newest {admission.IGNORED_KEEP} are kept to list; 1005 in all" in shown.stderr
    assert "typeform unknown_form 1005" in shown.stderr
