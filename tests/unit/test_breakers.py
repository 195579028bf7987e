"""The breakers' rules (herald.domain.breakers): when they trip, how long they stay open, the
half-open probe, and when an endpoint is disabled. The clock is an argument: epoch seconds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from herald.domain.breakers import (
    ENDPOINT_POLICY,
    PROVIDER_POLICY,
    Breaker,
    BreakerKey,
    BreakerKind,
    BreakerPolicy,
    BreakerState,
    claim_probe,
    closed,
    endpoint_origin,
    failed,
    succeeded,
)

T0 = 1_700_000_000
SENDGRID = BreakerKey(BreakerKind.PROVIDER, "t-1", "SENDGRID")
ENDPOINT = BreakerKey(BreakerKind.ENDPOINT, "t-1", "https://hooks.example")


def failures(
    breaker: Breaker, times: list[int], policy: BreakerPolicy = PROVIDER_POLICY, successes: int = 0
) -> Breaker:
    for index, now in enumerate(times):
        changed = failed(breaker, now, "HTTP 503", policy, successes=successes if index == 0 else 0)
        assert changed is not None
        breaker = changed
    return breaker


def test_given_four_failures_when_a_fifth_comes_within_a_minute_then_the_provider_breaker_opens() -> None:
    four = failures(Breaker(SENDGRID), [T0, T0 + 5, T0 + 10, T0 + 20])
    assert four.state is BreakerState.CLOSED

    fifth = failures(four, [T0 + 30])

    assert fifth.state is BreakerState.OPEN
    assert (fifth.open_until, fifth.cooldown_seconds, fifth.since) == (T0 + 60, 30, T0 + 30)
    assert fifth.holds_back(T0 + 59)
    assert not fifth.holds_back(T0 + 60)


def test_given_failures_spread_over_more_than_the_window_then_the_breaker_stays_closed() -> None:
    breaker = failures(Breaker(SENDGRID), [T0, T0 + 20, T0 + 40, T0 + 61, T0 + 81])

    assert breaker.state is BreakerState.CLOSED


def test_given_many_successes_carried_in_then_failures_below_half_keep_it_closed() -> None:
    # 5 failures against 6 successes carried in by the first failure write: 45 % < 50 %.
    breaker = failures(Breaker(SENDGRID), [T0, T0 + 1, T0 + 2, T0 + 3, T0 + 4], successes=6)
    assert breaker.state is BreakerState.CLOSED

    assert failures(breaker, [T0 + 5]).state is BreakerState.OPEN  # 6 of 12: half


def test_given_a_closed_breaker_when_a_call_succeeds_then_nothing_is_written() -> None:
    assert succeeded(Breaker(SENDGRID), T0) is None
    assert succeeded(failures(Breaker(SENDGRID), [T0]), T0 + 1) is None


def test_given_an_open_breaker_when_its_cool_down_ends_then_one_probe_is_claimed_and_others_wait() -> None:
    open_ = failures(Breaker(SENDGRID), [T0] * 5)
    assert open_.probe_due(T0 + 30)

    probe = claim_probe(open_, T0 + 30, PROVIDER_POLICY)

    assert probe.version == open_.version + 1
    assert probe.holds_back(T0 + 31)
    assert not probe.probe_due(T0 + 31)
    assert probe.probe_due(T0 + 30 + PROVIDER_POLICY.probe_lease_seconds)  # a crashed probe expires


def test_given_a_probe_when_it_fails_then_the_cool_down_doubles_up_to_the_cap() -> None:
    breaker = failures(Breaker(SENDGRID), [T0] * 5)
    cooldowns = []
    now = T0
    for _ in range(7):
        now = breaker.open_until or now
        reopened = failed(breaker, now, "HTTP 503", PROVIDER_POLICY, probing=True)
        assert reopened is not None
        breaker = reopened
        cooldowns.append(breaker.cooldown_seconds)

    assert cooldowns == [60, 120, 240, 480, 600, 600, 600]
    assert breaker.state is BreakerState.OPEN


def test_given_an_open_breaker_when_a_call_that_is_not_the_probe_fails_then_nothing_is_written() -> None:
    open_ = failures(Breaker(SENDGRID), [T0] * 5)

    assert failed(open_, T0 + 1, "HTTP 503", PROVIDER_POLICY) is None


def test_given_an_open_breaker_when_the_probe_succeeds_then_it_closes_with_a_clean_window() -> None:
    open_ = failures(Breaker(SENDGRID), [T0] * 5)

    closed_ = succeeded(claim_probe(open_, T0 + 30, PROVIDER_POLICY), T0 + 31)

    assert closed_ is not None
    assert (closed_.state, closed_.slots, closed_.consecutive, closed_.since) == (
        BreakerState.CLOSED,
        (),
        0,
        T0 + 31,
    )
    assert closed_.last_error == "HTTP 503"


def test_given_an_endpoint_when_five_consecutive_failures_come_then_it_opens_and_a_success_resets() -> None:
    four = failures(Breaker(ENDPOINT), [T0, T0 + 100, T0 + 200, T0 + 300], ENDPOINT_POLICY)
    assert four.state is BreakerState.CLOSED

    reset = succeeded(four, T0 + 301)
    assert reset is not None
    assert reset.consecutive == 0

    assert failures(four, [T0 + 3600], ENDPOINT_POLICY).state is BreakerState.OPEN


def test_given_an_endpoint_failing_for_five_days_when_its_probe_fails_then_it_is_disabled() -> None:
    breaker = failures(Breaker(ENDPOINT), [T0] * 5, ENDPOINT_POLICY)
    day = 24 * 3600
    still_open = failed(breaker, T0 + 5 * day - 1, "timeout", ENDPOINT_POLICY, probing=True)
    assert still_open is not None
    assert still_open.state is BreakerState.OPEN

    disabled = failed(still_open, T0 + 5 * day, "timeout", ENDPOINT_POLICY, probing=True)

    assert disabled is not None
    assert (disabled.state, disabled.since, disabled.last_error) == (
        BreakerState.DISABLED,
        T0 + 5 * day,
        "timeout",
    )
    assert disabled.holds_back(T0 + 10 * day)
    assert failed(disabled, T0 + 6 * day, "timeout", ENDPOINT_POLICY, probing=True) is None
    assert succeeded(disabled, T0 + 6 * day) is None  # only the tenant re-enables it
    enabled = closed(disabled, T0 + 7 * day)
    assert (enabled.state, enabled.since, enabled.version) == (
        BreakerState.CLOSED,
        T0 + 7 * day,
        disabled.version + 1,
    )


def test_endpoint_origins_ignore_path_case_and_the_default_port() -> None:
    assert endpoint_origin("https://Hooks.Example:443/a/b?c=d") == "https://hooks.example"
    assert endpoint_origin("https://hooks.example:8443/x") == "https://hooks.example:8443"


@given(st.lists(st.tuples(st.integers(0, 600), st.booleans()), max_size=60))
def test_property_a_provider_breaker_trips_exactly_when_half_of_five_calls_in_the_window_failed(
    calls: list[tuple[int, bool]],
) -> None:
    """Whatever the calls (offset, failed?), a closed breaker trips on a failure exactly when the
    last minute (in 10 s slots) holds at least 5 calls of which at least half failed; successes count
    from the failure write that carries them. Every stored change bumps the version by one."""
    breaker = Breaker(SENDGRID)
    unstored = 0
    counted: list[tuple[int, bool]] = []  # (slot start, failed?) of the calls the table knows
    for offset, is_failure in sorted(calls):
        now = T0 + offset
        if is_failure:
            changed = failed(breaker, now, "HTTP 500", PROVIDER_POLICY, successes=unstored)
            if breaker.state is BreakerState.CLOSED:
                slot = now - now % 10
                counted += [(slot, False)] * unstored + [(slot, True)]
                live = [failure for start, failure in counted if start > now - 60]
                trips = len(live) >= 5 and 2 * sum(live) >= len(live)
                assert changed is not None
                assert (changed.state is BreakerState.OPEN) == trips
                if trips:
                    counted = []
            unstored = 0
        else:
            changed = succeeded(breaker, now)
            unstored += changed is None
        if changed is not None:
            assert changed.version == breaker.version + 1
            breaker = changed
