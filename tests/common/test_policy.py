"""The retry schedule and the classification, pinned."""

import pytest

from workers.common.policy import AUTH, EXPIRED, INVALID, THROTTLED, TRANSIENT, JobError, backoff, classify, decide


@pytest.mark.parametrize(
    "status, error, expected",
    [
        (500, None, TRANSIENT),
        (503, {"code": 2, "message": "Service temporarily unavailable"}, TRANSIENT),
        (400, {"code": 1}, TRANSIENT),
        (400, {"code": 4}, THROTTLED),
        (400, {"code": 17}, THROTTLED),
        (400, {"code": 32}, THROTTLED),
        (400, {"code": 613}, THROTTLED),
        (400, {"code": 80005}, THROTTLED),
        (400, {"code": 80014}, THROTTLED),
        (400, {"code": 368}, THROTTLED),
        (401, {"code": 190, "error_subcode": 463}, AUTH),
        (400, {"code": 102}, AUTH),
        (403, {"code": 10}, AUTH),
        (403, {"code": 200}, AUTH),
        (403, {"code": 299}, AUTH),
        (400, {"code": 100, "error_subcode": 33}, INVALID),
        (400, {"code": 100, "error_subcode": 2804016}, INVALID),
        (400, {"code": 100}, INVALID),
        (400, {"code": 100, "error_subcode": 2804003}, EXPIRED),
        (400, {"code": 9999, "is_transient": True}, TRANSIENT),
        (400, {"code": 9999}, INVALID),
    ],
)
def test_classify_by_code_and_subcode(status, error, expected):
    assert classify(status, error) == expected


def test_classify_ignores_the_localised_message():
    assert classify(400, {"code": 613, "message": "Appel limité"}) == classify(400, {"code": 613, "message": "x"})


# The schedule, written once: step n = base * 2**(n-1), capped at 1 h (throttled: x10, cap 2 h),
# waiting between half and all of the step.
@pytest.mark.parametrize(
    "reason, shortest, longest",
    [
        (TRANSIENT, [15, 30, 60, 120, 240, 480, 960, 1800, 1800], [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]),
        (THROTTLED, [150, 300, 600, 1200, 2400, 3600, 3600], [300, 600, 1200, 2400, 4800, 7200, 7200]),
    ],
)
def test_backoff_schedule(reason, shortest, longest):
    attempts = range(1, len(shortest) + 1)
    assert [backoff(reason, n, rand=lambda: 0.0) for n in attempts] == shortest
    assert [backoff(reason, n, rand=lambda: 1.0) for n in attempts] == longest


def test_backoff_honours_metas_regain_access_estimate():
    assert backoff(THROTTLED, 1, retry_after=1200, rand=lambda: 1.0) == 1200


def test_backoff_jitter_spreads_retries():
    assert len({backoff(TRANSIENT, 5) for _ in range(50)}) > 10


def err(reason, **kw):
    return JobError(reason, "test", **kw)


NOW = 1_800_000_000.0
FAR = NOW + 7 * 86400


def test_decide_retries_transient_and_throttled():
    assert decide(err(TRANSIENT), 1, FAR, NOW, rand=lambda: 0.0).retry_in == 15
    assert decide(err(THROTTLED), 1, FAR, NOW, rand=lambda: 0.0).retry_in == 150


@pytest.mark.parametrize("reason", [AUTH, INVALID, EXPIRED])
def test_decide_dead_letters_the_rest_at_once(reason):
    decision = decide(err(reason), 1, FAR, NOW)
    assert decision.retry_in is None and decision.reason == reason


def test_not_found_is_tried_three_times_then_invalid():
    missing = err(INVALID, code=100, subcode=33)
    assert decide(missing, 1, FAR, NOW).retry_in is not None
    assert decide(missing, 2, FAR, NOW).retry_in is not None
    assert decide(missing, 3, FAR, NOW).reason == INVALID


def test_no_retry_is_scheduled_past_the_deadline():
    decision = decide(err(TRANSIENT), 1, deadline=NOW + 10, now=NOW, rand=lambda: 0.0)
    assert decision.retry_in is None and decision.reason == EXPIRED


def test_retries_stop_after_max_attempts():
    assert decide(err(TRANSIENT), 48, FAR, NOW).reason == TRANSIENT
