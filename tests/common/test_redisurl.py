"""REDIS_URL forms: a single server, or Sentinels and a primary's name; what is wrong
with a URL is said in words, and passwords are never shown."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workers.common import redisurl
from workers.config.needed import ConfigError
from workers.config.settings import load


def test_a_sentinel_url_names_its_sentinels_primary_database_and_passwords():
    found = redisurl.parse_sentinel("redis+sentinel://app:pw@s1:26380,s2,[::1]:26381/leads/2?sentinel_password=sp")
    assert found.sentinels == (("s1", 26380), ("s2", 26379), ("::1", 26381))
    assert (found.master, found.db, found.username, found.password, found.tls) == ("leads", 2, "app", "pw", False)
    assert found.options == {"sentinel_password": "sp"}
    assert redisurl.parse_sentinel("rediss+sentinel://s1/leads").tls


@pytest.mark.parametrize(
    "url, says",
    [
        ("redis+sentinel://s1:26379", "the primary's name"),
        ("redis+sentinel:///leads", "at least one Sentinel"),
        ("redis+sentinel://s1:port/leads", "host or host:port"),
        ("redis+sentinel://s1/leads/zero", "the primary's name"),
        ("redis+sentinel://s1/leads?sentinel_pasword=x", "unknown option 'sentinel_pasword'"),
        ("http://redis.example.com", "must be a URL starting with redis://"),
    ],
)
def test_a_malformed_url_fails_at_start_naming_redis_url_and_what_is_wrong(url, says):
    with pytest.raises(ConfigError) as err:
        load({"REDIS_URL": url})
    assert str(err.value).startswith("REDIS_URL: ") and says in str(err.value)


@given(
    # Characters no other part of these URLs has (a password's & or @ is percent-encoded in a URL).
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!$'()+,;=-_~αβγ", min_size=6),
    st.sampled_from(["redis://:{p}@h:6379/0", "redis+sentinel://u:{p}@a:1,b:2/m", "rediss://u:{p}@h/0"]),
)
def test_a_shown_url_never_holds_its_password(password, form):
    url = form.format(p=password)
    shown = redisurl.masked(url + "?sentinel_password=" + password if "sentinel" in form else url)
    assert password not in shown and "***" in shown


def test_a_url_without_password_is_shown_as_it_is():
    assert redisurl.masked("redis+sentinel://a:1,b:2/m") == "redis+sentinel://a:1,b:2/m"
