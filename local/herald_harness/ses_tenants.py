"""SES tenants for in-process tests on moto, which has none: the sandbox's ``TenantBook`` answers the
tenant operations before botocore sends them (so the least-privilege log still sees each call), and
checks a ``SendEmail``'s ``TenantName`` before moto sends it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from herald_local.aws.sdk_calls import Proceed, SdkCall, observing
from herald_local.sandbox.ses.tenants import OPERATIONS, SesError, TenantBook

BOOK = TenantBook()
# (TenantName, recipients) of each SendEmail that named a tenant and passed its check, oldest first.
TENANT_SENDS: list[tuple[str, list[str]]] = []


def _parsed(answer: dict[str, Any]) -> dict[str, Any]:
    """As botocore parses SES's answer: timestamps as datetimes."""
    tenant = answer.get("Tenant", answer)
    if isinstance(tenant.get("CreatedTimestamp"), float):
        tenant["CreatedTimestamp"] = datetime.fromtimestamp(tenant["CreatedTimestamp"], UTC)
    return answer


def _client_error(failure: SesError, operation: str) -> ClientError:
    response: Any = {
        "Error": {"Code": failure.code, "Message": failure.message},
        "ResponseMetadata": {"HTTPStatusCode": failure.status},
    }
    return ClientError(response, operation)


def _answer(call: SdkCall, proceed: Proceed) -> Any:
    if call.service != "sesv2":
        return proceed()
    try:
        if call.operation in OPERATIONS:
            return _parsed(OPERATIONS[call.operation](BOOK, call.params))
        if call.operation == "SendEmail" and "TenantName" in call.params:
            BOOK.check_send(call.params["TenantName"])
            TENANT_SENDS.append((call.params["TenantName"], list(call.params["Destination"]["ToAddresses"])))
    except SesError as failure:
        raise _client_error(failure, call.operation) from None
    return proceed()


@contextmanager
def imitating_ses_tenants() -> Iterator[TenantBook]:
    """Inside the block (a moto stack's lifetime): a client stubbed outside it, such as a unit test's
    botocore Stubber, is answered by its stub, not by this imitation. Yields the book, to trip
    tenants in."""
    with observing(_answer):
        yield BOOK
