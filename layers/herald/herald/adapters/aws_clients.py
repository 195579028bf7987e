"""boto3 clients, one per service and process, with explicit timeouts and retry budgets.

The endpoint comes from the standard ``AWS_ENDPOINT_URL`` variables, so the local stack and the
tests point every client at moto without code changes.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

from herald.settings import get_settings

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_sesv2 import SESV2Client
    from mypy_boto3_sqs import SQSClient


def client_config(max_attempts: int | None = None) -> Config:
    settings = get_settings()
    return Config(
        region_name=settings.region,
        connect_timeout=3,
        read_timeout=10,
        retries={"mode": "standard", "total_max_attempts": max_attempts or settings.aws_max_attempts},
    )


@cache
def _client(service: str, max_attempts: int | None = None) -> Any:
    return boto3.session.Session().client(service, config=client_config(max_attempts))  # type: ignore[call-overload]


def sqs() -> SQSClient:
    client: SQSClient = _client("sqs")
    return client


def kms() -> KMSClient:
    client: KMSClient = _client("kms")
    return client


def sesv2() -> SESV2Client:
    # One try per send: Herald's own backoff and provider fallback decide what happens next, and
    # a send must stay well inside the worker's time budget.
    client: SESV2Client = _client("sesv2", 1)
    return client
