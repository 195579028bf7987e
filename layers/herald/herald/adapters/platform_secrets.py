"""The platform's own secrets (payment processors' webhook keys), kept as SSM Parameter Store
SecureStrings named by the template and read once per container."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from herald.domain.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient


class SsmSecret:
    """Calling it returns the secret; only a successful read is kept, so a failed one is retried by
    the next request. Never logged: a failure names the parameter and AWS's error code only."""

    def __init__(self, name: str, ssm: Callable[[], SSMClient]) -> None:
        self._name = name
        self._ssm = ssm
        self._value: str | None = None
        self._lock = threading.Lock()

    def __call__(self) -> str:
        with self._lock:
            if self._value is None:
                self._value = self._read()
            return self._value

    def _read(self) -> str:
        try:
            answer = self._ssm().get_parameter(Name=self._name, WithDecryption=True)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "ClientError")
            raise DependencyError(f"platform secret {self._name} read failed: {code}") from exc
        except BotoCoreError as exc:
            raise DependencyError(f"platform secret {self._name} read failed: {type(exc).__name__}") from exc
        return answer["Parameter"].get("Value", "")
