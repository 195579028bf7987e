"""AWS clients, one per service and process, with explicit timeouts and retry budgets.

They are botocore clients, the same objects ``boto3.client`` returns, without boto3's own import
(its resource layer and s3transfer, which loads multiprocessing), which no function uses. The
endpoint comes from the standard ``AWS_ENDPOINT_URL`` variables, so the local stack and the tests
point every client at moto without code changes.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from botocore.config import Config
from botocore.session import Session

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_s3 import S3Client
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


class AwsClients:
    """The clients of one composition root, each created on first use (a cold start pays only for
    what it calls) and then reused."""

    def __init__(self, region: str, max_attempts: int) -> None:
        self._region = region
        self._max_attempts = max_attempts
        self._clients: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _client(self, service: str, max_attempts: int) -> Any:
        with self._lock:
            if service not in self._clients:
                config = client_config(self._region, max_attempts)
                self._clients[service] = Session().create_client(service, config=config)
            return self._clients[service]

    def sqs(self) -> SQSClient:
        client: SQSClient = self._client("sqs", self._max_attempts)
        return client

    def kms(self) -> KMSClient:
        client: KMSClient = self._client("kms", self._max_attempts)
        return client

    def sns(self) -> SNSClient:
        client: SNSClient = self._client("sns", self._max_attempts)
        return client

    def ssm(self) -> SSMClient:
        client: SSMClient = self._client("ssm", self._max_attempts)
        return client

    def s3(self) -> S3Client:
        # Created by the first attachment a function handles: S3's service model is large (tens of
        # milliseconds to load), and most requests carry none.
        client: S3Client = self._client("s3", self._max_attempts)
        return client

    def sesv2(self) -> SESV2Client:
        # One try per send: Herald's own backoff and provider fallback decide what happens next, and
        # a send must stay well inside the worker's time budget.
        client: SESV2Client = self._client("sesv2", 1)
        return client
