"""AWS clients, one per service and process, with explicit timeouts and retry budgets.

They are botocore clients, the same objects ``boto3.client`` returns, without boto3's own import
(its resource layer and s3transfer, which loads multiprocessing), which no function uses. The
endpoint comes from the standard ``AWS_ENDPOINT_URL`` variables, so the local stack and the tests
point every client at moto without code changes.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from botocore.config import Config
from botocore.session import Session

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_sesv2 import SESV2Client
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_ssm import SSMClient


def client_config(region: str, max_attempts: int) -> Config:
    return Config(
        region_name=region,
        connect_timeout=3,
        read_timeout=10,
        retries={"mode": "standard", "total_max_attempts": max_attempts},
    )


@cache
def _client(service: str, region: str, max_attempts: int) -> Any:
    return Session().create_client(service, config=client_config(region, max_attempts))


class AwsClients:
    """The clients of one process, created on first use (a cold start pays only for what it calls)."""

    def __init__(self, region: str, max_attempts: int) -> None:
        self._region = region
        self._max_attempts = max_attempts

    def sqs(self) -> SQSClient:
        client: SQSClient = _client("sqs", self._region, self._max_attempts)
        return client

    def kms(self) -> KMSClient:
        client: KMSClient = _client("kms", self._region, self._max_attempts)
        return client

    def sns(self) -> SNSClient:
        client: SNSClient = _client("sns", self._region, self._max_attempts)
        return client

    def ssm(self) -> SSMClient:
        client: SSMClient = _client("ssm", self._region, self._max_attempts)
        return client

    def sesv2(self) -> SESV2Client:
        # One try per send: Herald's own backoff and provider fallback decide what happens next, and
        # a send must stay well inside the worker's time budget.
        client: SESV2Client = _client("sesv2", self._region, 1)
        return client


def reset() -> None:
    """Forget every client (tests that point the process at another endpoint)."""
    _client.cache_clear()
