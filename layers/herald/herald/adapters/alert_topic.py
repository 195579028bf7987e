"""The alert topic (SNS): job alerts published for the AlertFunction and any other subscriber."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from herald.domain.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient


class SnsAlertPublisher:
    def __init__(self, topic_arn: str, sns: Callable[[], SNSClient]) -> None:
        self._topic_arn = topic_arn
        self._sns = sns

    def publish(self, subject: str, message: dict[str, Any]) -> None:
        try:
            self._sns().publish(TopicArn=self._topic_arn, Subject=subject, Message=json.dumps(message))
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"alert topic unavailable: {type(exc).__name__}") from exc
