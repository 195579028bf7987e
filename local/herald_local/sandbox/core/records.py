"""The records the sandbox keeps of what it saw, and how the JSON views show them."""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from herald.domain.clock import iso, utc_now


class Outcome(StrEnum):
    ACCEPTED = "accepted"
    REPLAYED = "replayed"  # answered from an idempotency record; no second message
    REJECTED = "rejected"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class SeenAttachment:
    """A file as the imitated vendor received it: what a recipient would find attached."""

    filename: str
    content_type: str
    content: bytes

    @classmethod
    def of_base64(cls, filename: str, content_type: str, encoded: str) -> SeenAttachment:
        """From a JSON API's base64 field; content that does not decode is kept as sent, so a test
        sees the mistake instead of an empty file."""
        try:
            content = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            content = encoded.encode()
        return cls(filename, content_type, content)

    def as_json(self) -> dict[str, Any]:
        return {
            "filename": self.filename,
            "contentType": self.content_type,
            "size": len(self.content),
            "sha256": hashlib.sha256(self.content).hexdigest(),
        }


@dataclass(frozen=True)
class SendSummary:
    """The parts of a send request the sandbox reads back, whatever the provider's body shape."""

    recipients: list[str] = field(default_factory=list)
    sender: str = ""
    subject: str = ""
    job_id: str | None = None
    text: str | None = None
    html: str | None = None
    # The mail headers the sender added, as the vendor received them (name -> value).
    mail_headers: dict[str, str] = field(default_factory=dict)
    attachments: tuple[SeenAttachment, ...] = ()

    @property
    def recipient(self) -> str:
        return self.recipients[0] if self.recipients else ""


@dataclass(frozen=True)
class Message:
    id: str
    provider: str  # the email provider's service name
    summary: SendSummary
    headers: dict[str, str]
    body: Any
    received_at: datetime = field(default_factory=utc_now)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "provider": self.provider,
            "recipient": self.summary.recipient,
            "recipients": self.summary.recipients,
            "from": self.summary.sender,
            "subject": self.summary.subject,
            "jobId": self.summary.job_id,
            "text": self.summary.text,
            "html": self.summary.html,
            "mailHeaders": self.summary.mail_headers,
            "attachments": [item.as_json() for item in self.summary.attachments],
            "headers": self.headers,
            "body": self.body,
            "receivedAt": iso(self.received_at),
        }


@dataclass(frozen=True)
class Attempt:
    provider: str
    summary: SendSummary
    status: int
    outcome: Outcome
    at: datetime = field(default_factory=utc_now)

    def as_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "recipient": self.summary.recipient,
            "recipients": self.summary.recipients,
            "jobId": self.summary.job_id,
            "status": self.status,
            "outcome": self.outcome.value,
            "at": iso(self.at),
        }


@dataclass(frozen=True)
class Hook:
    name: str
    method: str
    query: str
    headers: dict[str, str]
    body: str
    json: Any
    job_id: str | None
    signatures: dict[str, bool | None]
    status: int
    received_at: datetime = field(default_factory=utc_now)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": self.method,
            "query": self.query,
            "headers": self.headers,
            "body": self.body,
            "json": self.json,
            "jobId": self.job_id,
            "signatures": self.signatures,
            "status": self.status,
            "receivedAt": iso(self.received_at),
        }


@dataclass
class Domain:
    """A registered domain; ``details`` is the provider's own response shape, kept up to date."""

    id: str
    name: str
    details: dict[str, Any]


@dataclass(frozen=True)
class SlackMessage:
    hook: str
    text: str
    blocks: list[Any]
    received_at: datetime = field(default_factory=utc_now)

    def as_json(self) -> dict[str, Any]:
        return {
            "hook": self.hook,
            "text": self.text,
            "blocks": self.blocks,
            "receivedAt": iso(self.received_at),
        }
