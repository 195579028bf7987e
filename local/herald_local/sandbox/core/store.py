"""What the sandbox has seen, in memory and thread-safe: messages, send attempts, received hooks,
webhook signing secrets, registered domains and Resend idempotency keys."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from herald.domain.clock import utc_now
from herald_local.sandbox.core.records import (
    Attempt,
    Domain,
    Hook,
    Message,
    SendSummary,
    SlackMessage,
)

_Record = TypeVar("_Record")


@dataclass(frozen=True)
class Replay:
    message_id: str


@dataclass(frozen=True)
class KeyConflict:
    """Why an idempotency key cannot be used now: Resend's error ``name``."""

    name: str


class Reserved:
    """The key was free and is now held for this request until ``complete`` or ``release``."""


@dataclass
class _IdempotencyRecord:
    body_digest: str
    created: datetime
    message_id: str | None = None  # None while the first request is still in flight


# Resend keeps idempotency keys for 24 hours (its API reference says so).
IDEMPOTENCY_TTL = timedelta(hours=24)


def _matching(items: Iterable[_Record], predicate: Callable[[_Record], bool]) -> list[_Record]:
    return [item for item in items if predicate(item)]


class SandboxStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: list[Message] = []
        self._attempts: list[Attempt] = []
        self._hooks: list[Hook] = []
        self._secrets: list[str] = []
        self._domains: defaultdict[str, dict[str, Domain]] = defaultdict(dict)  # by provider
        self._idempotency: dict[str, _IdempotencyRecord] = {}
        self._slack: list[SlackMessage] = []

    # messages and attempts
    def add_message(self, message: Message) -> None:
        with self._lock:
            self._messages.append(message)

    def add_attempt(self, attempt: Attempt) -> None:
        with self._lock:
            self._attempts.append(attempt)

    def messages(
        self, to: str | None = None, job_id: str | None = None, provider: str | None = None
    ) -> list[Message]:
        with self._lock:
            snapshot = list(self._messages)
        return _matching(
            snapshot, lambda item: _send_matches(item.provider, item.summary, to, job_id, provider)
        )

    def attempts(
        self, to: str | None = None, job_id: str | None = None, provider: str | None = None
    ) -> list[Attempt]:
        with self._lock:
            snapshot = list(self._attempts)
        return _matching(
            snapshot, lambda item: _send_matches(item.provider, item.summary, to, job_id, provider)
        )

    def clear_messages(self) -> None:
        with self._lock:
            self._messages.clear()
            self._attempts.clear()
            self._idempotency.clear()

    # hooks and signing secrets
    def add_hook(self, hook: Hook) -> None:
        with self._lock:
            self._hooks.append(hook)

    def hooks(self, name: str | None = None, job_id: str | None = None) -> list[Hook]:
        with self._lock:
            snapshot = list(self._hooks)
        return _matching(
            snapshot,
            lambda hook: (name is None or hook.name == name) and (job_id is None or hook.job_id == job_id),
        )

    def clear_hooks(self) -> None:
        with self._lock:
            self._hooks.clear()

    def add_secret(self, secret: str) -> int:
        with self._lock:
            if secret not in self._secrets:
                self._secrets.append(secret)
            return len(self._secrets)

    def secrets(self) -> list[str]:
        with self._lock:
            return list(self._secrets)

    # slack
    def add_slack_message(self, message: SlackMessage) -> None:
        with self._lock:
            self._slack.append(message)

    def slack_messages(self) -> list[SlackMessage]:
        with self._lock:
            return list(self._slack)

    def clear_slack(self) -> None:
        with self._lock:
            self._slack.clear()

    # domains
    def add_domain(self, provider: str, domain: Domain) -> None:
        with self._lock:
            self._domains[provider][domain.id] = domain

    def domain(self, provider: str, domain_id: str) -> Domain | None:
        with self._lock:
            return self._domains[provider].get(domain_id)

    def domains(self, provider: str) -> list[Domain]:
        with self._lock:
            return list(self._domains[provider].values())

    def remove_domain(self, provider: str, domain_id: str) -> Domain | None:
        with self._lock:
            return self._domains[provider].pop(domain_id, None)

    # Resend idempotency
    def reserve_key(self, key: str, body_digest: str) -> Reserved | Replay | KeyConflict:
        now = utc_now()
        with self._lock:
            record = self._idempotency.get(key)
            if record is None or now - record.created > IDEMPOTENCY_TTL:
                self._idempotency[key] = _IdempotencyRecord(body_digest, now)
                return Reserved()
            if record.body_digest != body_digest:
                return KeyConflict("invalid_idempotent_request")
            if record.message_id is None:
                return KeyConflict("concurrent_idempotent_requests")
            return Replay(record.message_id)

    def complete_key(self, key: str, message_id: str) -> None:
        with self._lock:
            record = self._idempotency.get(key)
            if record is not None:
                record.message_id = message_id

    def release_key(self, key: str) -> None:
        """A failed first request does not pin its key: the client may retry with it."""
        with self._lock:
            record = self._idempotency.get(key)
            if record is not None and record.message_id is None:
                del self._idempotency[key]

    def reset(self) -> None:
        self.clear_messages()
        self.clear_hooks()
        self.clear_slack()
        with self._lock:
            self._secrets.clear()
            self._domains.clear()


def _send_matches(
    item_provider: str,
    summary: SendSummary,
    to: str | None,
    job_id: str | None,
    provider: str | None,
) -> bool:
    if provider is not None and item_provider != provider.lower():
        return False
    if job_id is not None and summary.job_id != job_id:
        return False
    return to is None or to.lower() in (address.lower() for address in summary.recipients)
