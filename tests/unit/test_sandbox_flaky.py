"""The sandbox's recipients that fail at first (``flaky-<n>@…``)."""

from __future__ import annotations

from herald_local.sandbox.core.failures import FLAKY_STATUS, Failure, FlakySends, failure_for


def test_a_flaky_address_fails_its_first_sends_from_every_provider_then_is_accepted() -> None:
    flaky = FlakySends()
    address = "flaky-2+a1@example.com"
    answers = [failure_for([address], provider, flaky) for provider in ("sendgrid", "resend", "postmark")]
    assert answers == [Failure(FLAKY_STATUS), Failure(FLAKY_STATUS), None]


def test_each_tagged_flaky_address_counts_its_own_sends() -> None:
    flaky = FlakySends()
    assert failure_for(["flaky-1+a@example.com"], "sendgrid", flaky) == Failure(FLAKY_STATUS)
    assert failure_for(["flaky-1+b@example.com"], "sendgrid", flaky) == Failure(FLAKY_STATUS)
    assert failure_for(["FLAKY-1+a@example.com"], "sendgrid", flaky) is None
