"""Ports of the platform's own services: its mail, operator alerts and chat, the secret box, cache
statistics and the guard of outbound URLs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    # Only named in signatures: a function imports the domain modules its own path uses.
    from herald.domain.account import PlatformSending
    from herald.domain.alerts import AlertWindow, ChatOutcome, JobAlert, Notice
    from herald.domain.secrets import Purpose, SealedSecret


class PlatformMail(Protocol):
    def send(self, to: str, subject: str, text: str) -> None:
        """Send a message from the platform's own address; ``DependencyError`` when it cannot."""


class PlatformTenants(Protocol):
    """The free tenants' own standing on the platform's SES account (one SES tenant each)."""

    def ensure(self, tenant_id: str) -> object:
        """Create the tenant's SES tenant if missing (idempotent); ``DependencyError`` when SES fails."""

    def resume(self, tenant_id: str) -> object:
        """Reinstate a paused tenant's sending; ``DependencyError`` when SES fails."""

    def sending(self, tenant_id: str) -> PlatformSending:
        """Whether SES sends for the tenant now (``enabled`` before its SES tenant exists: its first
        send creates it); ``DependencyError`` when SES cannot be read."""


class Alerts(Protocol):
    def dead_lettered(self, alert: JobAlert) -> None:
        """Tell the operators about a job sent to the dead-letter queue (rate-limited). Never raises:
        the dead-letter copy is the record, the alert only points at it."""


class AlertPublisher(Protocol):
    def publish(self, subject: str, message: dict[str, Any]) -> None:
        """Publish to the alert topic; ``DependencyError`` when it cannot be reached."""


class AlertCounter(Protocol):
    def count(self, window: AlertWindow) -> int:
        """Count one dead-lettered job in ``window``; the window's count, this one included."""


class ChatNotifier(Protocol):
    def post(self, notice: Notice, queue_depth: int | None) -> ChatOutcome:
        """Post the notice to the operators' chat; ``DependencyError`` when it could not be reached
        or answered with a server error (a retry may help)."""


class CacheStats(Protocol):
    """Hit and miss counts of a cache, published as metrics (misses of the data key cache are KMS calls)."""

    @property
    def hits(self) -> int: ...

    @property
    def misses(self) -> int: ...


class SecretBox(Protocol):
    """Seals and opens tenant secrets (``SecretTampered`` when a record is not this tenant's)."""

    def seal(self, tenant_id: str, purpose: Purpose, plaintext: str) -> SealedSecret: ...

    def open(self, tenant_id: str, purpose: Purpose, sealed: SealedSecret) -> str: ...


class UrlGuard(Protocol):
    def __call__(self, url: str) -> object:
        """Raises ``UrlNotAllowed`` for a URL Herald may not call."""


class AttachmentStore(Protocol):
    """The attachments bucket: each file stored once under its key, encrypted at rest."""

    def put(self, key: str, content: bytes, content_type: str) -> None:
        """Store ``content``; ``DependencyError`` when the bucket cannot be reached."""

    def get(self, key: str) -> bytes:
        """The stored content; ``KeyError`` when it is gone (expired), ``DependencyError`` when the
        bucket cannot be reached."""


class AttachmentFetcher(Protocol):
    def __call__(self, url: str, limit: int) -> bytes:
        """The file at ``url``, fetched through the SSRF guard; ``UrlNotAllowed`` when the URL may
        not be called, ``AttachmentUnavailable`` when it gives no file of at most ``limit`` bytes."""
