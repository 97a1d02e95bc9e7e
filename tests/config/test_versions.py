"""The Graph API version's horizon: doctor and every process at start say it inside 90 days."""

from datetime import date

from helpers import leadrelay
from workers.common import logs
from workers.config import versions

TODAY = date(2026, 11, 24)


def test_a_version_ends_with_the_earlier_of_its_graph_and_marketing_api_ends():
    v24 = versions.horizon("v24.0", TODAY)
    # Meta's Marketing API table of 2026-11: v24.0 ended 2026-11-10 (it said 2026-10-06 before).
    assert (v24.ends, v24.which, v24.ended) == (date(2026, 11, 10), "Marketing API", True)
    assert v24.say() == "v24.0: Meta stopped serving it on 2026-11-10 (Marketing API)"
    v25 = versions.horizon("v25.0", TODAY)
    assert (v25.ends, v25.which, v25.days_left, v25.warn) == (date(2027, 2, 23), "Marketing API", 91, False)
    assert versions.horizon("v25.0", date(2026, 11, 26)).warn  # 89 days before its end: a v25 user is told


def test_inside_90_days_warns_and_a_version_without_an_announced_end_does_not():
    assert versions.horizon("v25.0", date(2026, 11, 26)).warn  # 89 days before its end
    assert not versions.horizon("v25.0", date(2026, 11, 24)).warn
    for current in ("v26.0", "v27.0"):  # no end announced; newer than this table
        assert not versions.horizon(current, TODAY).warn and versions.horizon(current, TODAY).ends is None


def test_a_version_older_than_the_table_has_ended():
    old = versions.horizon("v18.0", TODAY)
    assert old.ended and old.say() == "v18.0: older than every version Meta serves"


def test_doctor_fails_a_retired_version_with_the_fix(env, monkeypatch):
    monkeypatch.setenv("META_API_VERSION", "v24.0")
    out = leadrelay("doctor")
    assert out.returncode == 1
    assert "[FAIL] api version: v24.0: Meta stopped serving it on 2026-11-10 (Marketing API)" in out.stdout
    assert "fix: set META_API_VERSION to a current version (v26.0)" in out.stdout


def test_a_retiring_version_is_said_at_start(capfd):
    logs.configure("INFO")
    versions.warn_at_start("v24.0", "worker")
    versions.warn_at_start("v26.0", "worker")
    logged = capfd.readouterr().err
    assert logged.count('"api_version_retiring"') == 1 and "v24.0: Meta stopped serving it" in logged
