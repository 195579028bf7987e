"""The one observer chain over botocore (herald_local.aws.sdk_calls) that the function runners, the
least-privilege record and the benchmarks share: what an observer sees of a call, the order, and
that a block of observers ends without ending the others."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import botocore.session
import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from herald_local.aws.sdk_calls import Proceed, SdkCall, call_unobserved, observing


class Seen:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log
        self.calls: list[tuple[str, str, str, str]] = []

    def __call__(self, call: SdkCall, proceed: Proceed) -> Any:
        self.calls.append((call.service, call.action_prefix, call.operation, call.region))
        self.log.append(f"{self.name} before")
        answer = proceed()
        self.log.append(f"{self.name} after")
        return answer


@pytest.fixture
def ses() -> Iterator[tuple[BaseClient, Stubber]]:
    """An SES v2 client whose answers come from a stubber: nothing leaves the process."""
    client = botocore.session.get_session().create_client(
        "sesv2", region_name="eu-west-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )
    with Stubber(client) as stubber:
        yield client, stubber


def test_an_observer_sees_the_service_its_iam_prefix_the_operation_and_the_region(
    ses: tuple[BaseClient, Stubber],
) -> None:
    client, stubber = ses
    stubber.add_response("get_account", {"SendQuota": {"Max24HourSend": 200.0}})
    seen = Seen("counter", [])

    with observing(seen):
        answer = client.get_account()  # type: ignore[attr-defined]

    assert answer["SendQuota"]["Max24HourSend"] == 200.0
    assert seen.calls == [("sesv2", "ses", "GetAccount", "eu-west-1")]


def test_observers_wrap_the_call_in_order_and_an_inner_block_ends_without_the_outer_one(
    ses: tuple[BaseClient, Stubber],
) -> None:
    client, stubber = ses
    for _ in range(2):
        stubber.add_response("get_account", {})
    log: list[str] = []
    outer, inner = Seen("outer", log), Seen("inner", log)

    with observing(outer):
        with observing(inner):
            client.get_account()  # type: ignore[attr-defined]
        client.get_account()  # type: ignore[attr-defined]

    assert log == [
        "outer before",
        "inner before",
        "inner after",
        "outer after",
        "outer before",
        "outer after",
    ]
    assert len(inner.calls) == 1
    assert len(outer.calls) == 2


def test_a_call_made_unobserved_passes_no_observer(ses: tuple[BaseClient, Stubber]) -> None:
    client, stubber = ses
    stubber.add_response("get_account", {})
    seen = Seen("meter", [])

    with observing(seen):
        call_unobserved(client, "GetAccount", {})

    assert seen.calls == []


def test_an_observer_that_does_not_proceed_stops_the_call_and_its_error_reaches_the_caller(
    ses: tuple[BaseClient, Stubber],
) -> None:
    client, _ = ses  # no stubbed answer: the call must never get that far

    def refuse(call: SdkCall, proceed: Proceed) -> Any:
        raise ClientError({"Error": {"Code": "ServiceUnavailable", "Message": "on purpose"}}, call.operation)

    with observing(refuse), pytest.raises(ClientError, match="ServiceUnavailable"):
        client.get_account()  # type: ignore[attr-defined]
