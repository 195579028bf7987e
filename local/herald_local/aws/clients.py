"""boto3 clients for the runtime's own calls to moto: fake credentials, bounded waits, no retries.

Retries are off because moto answers an unimplemented call with HTTP 500, which botocore would
otherwise retry several times before the real error shows.
"""

from __future__ import annotations

from typing import Any

import boto3
from botocore.config import Config

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}


def moto_client(
    service: str, endpoint: str, region: str, read_timeout: float = 10.0, connections: int = 10
) -> Any:
    config = Config(
        region_name=region,
        connect_timeout=3,
        read_timeout=read_timeout,
        retries={"total_max_attempts": 1},
        max_pool_connections=connections,
    )
    session = boto3.session.Session(
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
        region_name=region,
    )
    return session.client(service, endpoint_url=endpoint, config=config)  # type: ignore[call-overload]
