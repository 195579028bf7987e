"""The shapes every email provider adapter speaks: the email as the tenant asked for it
(``herald.domain.notifications.EmailNotification``) and its routing, which key, and how it went; and
what a tenant keeps of its providers: their sealed credentials and its sending domains.

The delivery engine and the account routes are written against these types only; each adapter
translates its provider's wire format and error vocabulary into them, once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum

import msgspec

from herald.domain.secrets import SealedSecret
from herald.domain.vendors import ProviderName

# What a key, token or id Herald puts in a provider request's header may be: printable ASCII with
# no space at either end (HTTP clients refuse the rest, and a line break would inject a header).
HEADER_VALUE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")

# Names under which every send carries Herald's ids (each provider's custom arguments, tags or
# metadata); the inbound webhooks read them back to find the job and its tenant.
JOB_ID_TAG = "herald_job_id"
TENANT_ID_TAG = "herald_tenant_id"


class FailureKind(StrEnum):
    """How the delivery engine reacts to a failed provider call."""

    # Bad or revoked key, suspended account, sender or domain not set up there, monthly quota:
    # skip this provider for the rest of the job.
    PROVIDER_PERMANENT = "provider_permanent"
    # Invalid or rejected recipient, malformed content: the job fails now.
    MESSAGE_PERMANENT = "message_permanent"
    # Timeouts, connection errors, 408, 429, 5xx, daily quota: next provider, then retry later.
    TRANSIENT = "transient"


class Routing(msgspec.Struct, frozen=True, kw_only=True):
    """What an email goes out with besides its content: Herald's ids, which each vendor carries back
    in its events (its tags, metadata or variables), and the sender the attempt resolved."""

    job_id: str
    tenant_id: str
    from_address: str
    from_name: str | None = None
    # Mail headers Herald adds (RFC 8058's one-click unsubscribe), which each vendor takes its own way.
    headers: tuple[tuple[str, str], ...] = ()


class Credential(msgspec.Struct, frozen=True):
    """A tenant's decrypted provider secrets; they live in memory only for the provider call."""

    api_key: str
    # Where the vendor has one: the account token that manages sending domains.
    account_token: str | None = None

    def __repr__(self) -> str:
        token = "None" if self.account_token is None else "'<redacted>'"
        return f"Credential(api_key='<redacted>', account_token={token})"

    def secret_values(self) -> tuple[str, ...]:
        """The values that must never reach a log line or an error text."""
        return tuple(value for value in (self.api_key, self.account_token) if value)


class Delivered(msgspec.Struct, frozen=True):
    provider: ProviderName
    # None when the provider accepted the mail without naming it.
    provider_message_id: str | None


class ProviderFailure(Exception):
    """A provider call that did not succeed, already classified for the delivery engine.

    ``reason`` is short and safe to store and show: at most a trimmed provider ``message`` with
    every secret of the call removed, never a key and never a whole response body.
    """

    def __init__(
        self,
        provider: ProviderName,
        kind: FailureKind,
        reason: str,
        *,
        status: int | None = None,
        code: str | None = None,
        retry_after_seconds: float | None = None,
        suppress_recipient: bool = False,
    ) -> None:
        super().__init__(reason)
        self.provider = provider
        self.kind = kind
        self.reason = reason
        self.status = status
        self.code = code
        self.retry_after_seconds = retry_after_seconds
        self.suppress_recipient = suppress_recipient

    def __str__(self) -> str:
        facts = [f"HTTP {self.status}" if self.status is not None else None, self.code]
        detail = ", ".join(fact for fact in facts if fact)
        suffix = f" ({detail})" if detail else ""
        return f"{self.provider.value} {self.kind.value}: {self.reason}{suffix}"

    def __repr__(self) -> str:
        return (
            f"ProviderFailure(provider={self.provider.value}, kind={self.kind.value}, status={self.status}, "
            f"code={self.code!r}, reason={self.reason!r})"
        )


class DnsRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One DNS record a tenant must publish; ``host`` is always fully qualified, ``type`` upper-case."""

    type: str
    host: str
    value: str
    purpose: str  # "dkim", "spf", "return-path", "mx", ...
    priority: int | None = None
    status: str | None = None  # "verified", "pending" or "failed" where the provider reports it


class DomainRegistration(msgspec.Struct, frozen=True, kw_only=True):
    provider: ProviderName
    provider_domain_id: str
    records: tuple[DnsRecord, ...]
    verified: bool


class DomainVerification(msgspec.Struct, frozen=True, kw_only=True):
    verified: bool
    records: tuple[DnsRecord, ...] = ()


class KeyCheck(msgspec.Struct, frozen=True, kw_only=True):
    """The answer of a live key check. ``valid`` False means the provider refused the key for
    Herald's needs; a provider that could not answer raises ``ProviderFailure`` instead."""

    valid: bool
    reason: str | None = None
    details: Mapping[str, object] = msgspec.field(default_factory=dict)


class StoredProvider(msgspec.Struct, frozen=True):
    """A tenant's provider credential as stored: sealed, with its place in the fallback order."""

    provider: str
    priority: int
    api_key: SealedSecret
    last_four: str
    added_at: str
    account_token: SealedSecret | None = None
    webhook_secret: SealedSecret | None = None


class ProviderDomain(msgspec.Struct, frozen=True):
    """One provider's registration of a sending domain."""

    provider: str
    provider_domain_id: str
    verified: bool = False
    records: tuple[DnsRecord, ...] = ()
    error: str | None = None


class SendingDomain(msgspec.Struct, frozen=True):
    domain: str
    created_at: str
    providers: tuple[ProviderDomain, ...] = ()

    @property
    def verified(self) -> bool:
        return any(entry.verified for entry in self.providers)
