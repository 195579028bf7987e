"""Scripted email providers: each send answers with the next scripted answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from herald.domain.notifications import EmailNotification
from herald.domain.providers import (
    Credential,
    Delivered,
    DnsRecord,
    DomainRegistration,
    DomainVerification,
    FailureKind,
    KeyCheck,
    ProviderFailure,
    Routing,
)
from herald.domain.vendors import ProviderName

# A scripted answer: None delivers; an exception is raised (a ProviderFailure, or anything else to
# play an adapter bug).
Answer = Exception | None


def transient(
    provider: ProviderName, status: int = 500, retry_after_seconds: float | None = None
) -> ProviderFailure:
    return ProviderFailure(
        provider,
        FailureKind.TRANSIENT,
        "the provider is having trouble",
        status=status,
        retry_after_seconds=retry_after_seconds,
    )


def provider_permanent(provider: ProviderName) -> ProviderFailure:
    return ProviderFailure(provider, FailureKind.PROVIDER_PERMANENT, "the API key is invalid", status=401)


def message_permanent(
    provider: ProviderName, *, suppress_recipient: bool = False, code: str | None = None
) -> ProviderFailure:
    return ProviderFailure(
        provider,
        FailureKind.MESSAGE_PERMANENT,
        "the recipient address is invalid",
        status=422,
        code=code,
        suppress_recipient=suppress_recipient,
    )


@dataclass
class FakeProvider:
    """Answers each send with the next scripted answer; the last answer repeats once the script
    runs out (an empty script always delivers). Domains register with one pending TXT record and
    verify once ``verifiable`` is set; a key is valid unless it is in ``refused_keys``."""

    provider: ProviderName
    script: list[Answer] = field(default_factory=list)
    sent: list[tuple[EmailNotification, Routing, Credential]] = field(default_factory=list)
    refused_keys: set[str] = field(default_factory=set)
    checked: list[Credential] = field(default_factory=list)
    unavailable: bool = False
    verifiable: bool = False
    deleted: list[str] = field(default_factory=list)
    # Runs inside each send, before it answers: a test plays what happens meanwhile elsewhere.
    during_send: Callable[[], None] | None = None

    @property
    def name(self) -> ProviderName:
        return self.provider

    def send(self, email: EmailNotification, routing: Routing, credential: Credential) -> Delivered:
        self.sent.append((email, routing, credential))
        if self.during_send is not None:
            self.during_send()
        answer = self.script[min(len(self.sent), len(self.script)) - 1] if self.script else None
        if answer is not None:
            raise answer
        return Delivered(self.provider, f"{self.provider.value.lower()}-{len(self.sent)}")

    def check_key(self, credential: Credential) -> KeyCheck:
        self.checked.append(credential)
        if self.unavailable:
            raise transient(self.provider, status=503)
        if credential.api_key in self.refused_keys:
            return KeyCheck(valid=False, reason="the key was revoked")
        return KeyCheck(valid=True)

    def register_domain(self, domain: str, credential: Credential) -> DomainRegistration:
        if self.unavailable:
            raise transient(self.provider, status=503)
        record = DnsRecord(
            type="TXT", host=f"dkim.{domain}", value=f"{self.provider.value.lower()}-key", purpose="dkim"
        )
        return DomainRegistration(
            provider=self.provider,
            provider_domain_id=f"{domain}@{self.provider.value}",
            records=(record,),
            verified=False,
        )

    def verify_domain(self, registration_ref: str, credential: Credential) -> DomainVerification:
        return DomainVerification(verified=self.verifiable)

    def delete_domain(self, registration_ref: str, credential: Credential) -> None:
        self.deleted.append(registration_ref)


class FakeProviders:
    """The provider registry of the services: one ``FakeProvider`` per name."""

    def __init__(self) -> None:
        self.by_name = {name: FakeProvider(name) for name in ProviderName}
        # Provider names in the order they were called, across all attempts.
        self.calls: list[str] = []

    def __call__(self, name: ProviderName) -> FakeProvider:
        self.calls.append(name.value)
        return self.by_name[name]

    def script(self, name: ProviderName, *answers: Answer) -> None:
        self.by_name[name].script = list(answers)
