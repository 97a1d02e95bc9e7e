"""Dead letters waiting, counted as they come and go: a scrape reads the counts, never the
index, and the counts agree with the index whatever happens."""

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.failures import deadletters

NOW = time.time()


def entry(n: int, reason: str, dataset: str | None = None) -> dict:
    return {
        "job_id": f"lead-meta-{n}",
        "source": "meta",
        "reason": reason,
        "attempts": 1,
        "first_attempt_at": NOW,
        "last_attempt_at": NOW,
        **({"route": {"dataset": dataset}, "dataset": dataset} if dataset else {}),
    }


def from_the_index(connection) -> dict:
    out: dict = {}
    for value in connection.hvals(deadletters.REASONS):
        reason, _, dataset = value.decode().partition(" ")
        out[(reason, dataset)] = out.get((reason, dataset), 0) + 1
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["record", "forget"]), st.integers(0, 5), st.sampled_from(["auth", "invalid"])),
        max_size=25,
    )
)
def test_the_counts_agree_with_the_index_after_any_records_and_forgets(redis_url, steps):
    import redis

    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    for step, n, reason in steps:
        if step == "record":  # a new one, or the same job again with another reason
            deadletters.record(connection, entry(n, reason))
        else:
            deadletters.forget(connection, f"lead-meta-{n}")
    assert dict(deadletters.by_reason(connection)) == from_the_index(connection)


def test_counts_from_an_earlier_release_are_made_once_from_the_index(redis_conn):
    redis_conn.hset(deadletters.REASONS, mapping={"a": "auth default", "b": "auth default", "c": "invalid acme"})
    assert deadletters.by_reason(redis_conn) == {("auth", "default"): 2, ("invalid", "acme"): 1}
    deadletters.record(redis_conn, entry(9, "invalid", "acme"))  # counted on top, not recounted
    assert deadletters.by_reason(redis_conn)[("invalid", "acme")] == 2
