"""Typed settings, read once per process from the environment the template gives each function.

Logic never reads ``os.environ``: it receives a ``Settings`` (or calls ``get_settings()``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache


class Channel(StrEnum):
    EMAIL = "email"
    WEBHOOK = "webhook"


class QueuePriority(StrEnum):
    CRITICAL = "critical"
    NORMAL = "normal"
    LOW = "low"


class SettingsError(RuntimeError):
    """A required environment variable is missing or malformed (a deployment bug)."""


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise SettingsError(f"environment variable {name} is not set")
    return value


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise SettingsError(f"environment variable {name} must be an integer") from exc


@dataclass(frozen=True)
class Settings:
    table_name: str
    kms_key_id: str
    queue_urls: Mapping[tuple[Channel, QueuePriority], str]
    dlq_url: str
    region: str = "us-east-1"
    stage: str = "dev"
    max_attempts: int = 3
    retry_base_delay_seconds: int = 30
    sendgrid_base_url: str = "https://api.sendgrid.com"
    resend_base_url: str = "https://api.resend.com"
    postmark_base_url: str = "https://api.postmarkapp.com"
    platform_sender: str = "notifications@herald.example"
    # Only the local stack sets this (HERALD_LOCAL_WEBHOOK_ORIGIN): the one loopback origin webhooks
    # may target, its provider sandbox. The template never sets it, so deployed stacks always refuse.
    local_webhook_origin: str | None = None
    # Retries of AWS SDK calls; tests against moto set 1 (an unimplemented call answers 500).
    aws_max_attempts: int = 3
    # PynamoDB builds its own botocore client and ignores AWS_ENDPOINT_URL, so it is passed on.
    dynamodb_endpoint: str | None = None

    def queue_url(self, channel: Channel, priority: QueuePriority) -> str:
        return self.queue_urls[(channel, priority)]

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        queue_urls = {
            (channel, priority): _required(
                env, f"HERALD_QUEUE_{channel.value.upper()}_{priority.value.upper()}"
            )
            for channel in Channel
            for priority in QueuePriority
        }
        return cls(
            table_name=_required(env, "HERALD_TABLE"),
            kms_key_id=_required(env, "HERALD_KMS_KEY_ID"),
            queue_urls=queue_urls,
            dlq_url=_required(env, "HERALD_DLQ"),
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
            stage=env.get("HERALD_STAGE", "dev"),
            max_attempts=_int(env, "HERALD_MAX_ATTEMPTS", 3),
            retry_base_delay_seconds=_int(env, "HERALD_RETRY_BASE_DELAY_SECONDS", 30),
            sendgrid_base_url=env.get("HERALD_SENDGRID_BASE_URL") or cls.sendgrid_base_url,
            resend_base_url=env.get("HERALD_RESEND_BASE_URL") or cls.resend_base_url,
            postmark_base_url=env.get("HERALD_POSTMARK_BASE_URL") or cls.postmark_base_url,
            platform_sender=env.get("HERALD_PLATFORM_SENDER") or cls.platform_sender,
            local_webhook_origin=env.get("HERALD_LOCAL_WEBHOOK_ORIGIN", "").strip() or None,
            aws_max_attempts=_int(env, "HERALD_AWS_MAX_ATTEMPTS", 3),
            dynamodb_endpoint=env.get("AWS_ENDPOINT_URL_DYNAMODB") or env.get("AWS_ENDPOINT_URL") or None,
        )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, validated at cold start."""
    return Settings.from_env()
