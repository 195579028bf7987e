"""Mail from the platform's own address through Amazon SES v2 (the console's sign-in codes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from herald.domain.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_sesv2 import SESV2Client


class SesPlatformMail:
    def __init__(self, client: Callable[[], SESV2Client], sender: str) -> None:
        self._client = client
        self._sender = sender

    def send(self, to: str, subject: str, text: str) -> None:
        try:
            self._client().send_email(
                FromEmailAddress=self._sender,
                Destination={"ToAddresses": [to]},
                Content={
                    "Simple": {
                        "Subject": {"Data": subject, "Charset": "UTF-8"},
                        "Body": {"Text": {"Data": text, "Charset": "UTF-8"}},
                    }
                },
            )
        except ClientError as exc:
            raise DependencyError(
                f"platform mail failed: {exc.response.get('Error', {}).get('Code')}"
            ) from exc
        except BotoCoreError as exc:
            raise DependencyError(f"platform mail failed: {type(exc).__name__}") from exc
