"""One-click unsubscribe: the links the email worker signs, the public ``/u/{token}`` routes a
mailbox provider or the recipient calls, and the tenant's list of its recipients' unsubscribes.

The token is the only credential of the public routes: a token Herald did not sign, or one whose
tenant, recipient or topic was changed, is answered exactly like an unknown page (no oracle)."""

from __future__ import annotations

from collections.abc import Callable

from herald.domain.account import TenantContext
from herald.domain.audit import AuditAction, entry
from herald.domain.clock import now_iso
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.notifications import EmailNotification
from herald.domain.unsubscribes import (
    ALL_TOPICS,
    InvalidToken,
    Subscriber,
    Unsubscribe,
    UnsubscribePage,
    UnsubscribeSource,
    list_unsubscribe_headers,
    sign,
    subscriber,
    verify,
)
from herald.services.ports.unsubscribes import Unsubscribes

# The platform's signing key, read once per container (an SSM SecureString in AWS).
SigningKey = Callable[[], str]


def unsubscribed_reason(unsubscribe: Unsubscribe) -> str:
    """Why a job to an unsubscribed recipient failed, as its errorMessage says."""
    if unsubscribe.topic == ALL_TOPICS:
        return "recipient unsubscribed from every topic"
    return f"recipient unsubscribed from {unsubscribe.topic}"


class UnsubscribeLinks:
    """The RFC 8058 headers of a send that names a topic, for the email worker."""

    def __init__(self, key: SigningKey, origin: str) -> None:
        self._key = key
        self._origin = origin.rstrip("/")

    def headers(self, tenant_id: str, email: EmailNotification) -> tuple[tuple[str, str], ...]:
        topic = email.unsubscribe_topic
        if topic is None:
            return ()
        token = sign(self._key().encode(), subscriber(tenant_id, email.to, topic))
        return list_unsubscribe_headers(self._origin, token)


class UnsubscribeGate:
    """What the email worker asks of a send: whether its recipient unsubscribed from its topic (1
    BatchGetItem, only for a send that names one), and the headers that let them."""

    def __init__(self, unsubscribes: Unsubscribes, links: UnsubscribeLinks) -> None:
        self._unsubscribes = unsubscribes
        self._links = links

    def stopped(self, tenant_id: str, email: EmailNotification) -> str | None:
        """Why the send must not go out; None when it may. A send without a topic is not list mail
        (a receipt, a password reset): no unsubscribe stops it."""
        if email.unsubscribe_topic is None:
            return None
        found = self._unsubscribes.blocking(tenant_id, email.to, email.unsubscribe_topic)
        return unsubscribed_reason(found) if found else None

    def headers(self, tenant_id: str, email: EmailNotification) -> tuple[tuple[str, str], ...]:
        return self._links.headers(tenant_id, email)


def _not_found() -> HeraldError:
    return HeraldError("This unsubscribe link is not valid.", ErrorCode.NOT_FOUND)


class OneClick:
    """The public routes of an unsubscribe link. Every call is idempotent: a replayed POST finds the
    unsubscribe recorded already and answers as the first did."""

    def __init__(self, key: SigningKey, unsubscribes: Unsubscribes) -> None:
        self._key = key
        self._unsubscribes = unsubscribes

    def subscriber(self, token: str) -> Subscriber:
        try:
            return verify(self._key().encode(), token)
        except InvalidToken:
            raise _not_found() from None

    def unsubscribed(self, token: str) -> tuple[Subscriber, Unsubscribe | None]:
        """Whom the link names, and the unsubscribe that stops its topic's mail (None: it goes)."""
        who = self.subscriber(token)
        return who, self._unsubscribes.blocking(who.tenant_id, who.address, who.topic)

    def unsubscribe(self, token: str) -> Subscriber:
        who = self.subscriber(token)
        unsubscribe = Unsubscribe(who.address, who.topic, now_iso(), UnsubscribeSource.ONE_CLICK)
        self._unsubscribes.record(who.tenant_id, unsubscribe)
        return who

    def resubscribe(self, token: str) -> Subscriber:
        """The recipient takes back their own unsubscribe from the link's topic (not an account
        change: no audit entry). An unsubscribe from every topic stays: a provider reported it."""
        who = self.subscriber(token)
        self._unsubscribes.remove(who.tenant_id, who.address, who.topic)
        return who


class UnsubscribeList:
    """The tenant's view of its recipients' unsubscribes (the account API and the console)."""

    def __init__(self, unsubscribes: Unsubscribes) -> None:
        self._unsubscribes = unsubscribes

    def page(
        self, tenant: TenantContext, *, topic: str | None, address: str | None, limit: int, cursor: str | None
    ) -> UnsubscribePage:
        try:
            return self._unsubscribes.page(
                tenant.tenant_id, topic=topic, address=address, limit=limit, cursor=cursor
            )
        except ValueError as exc:
            raise HeraldError("The cursor is not valid.", ErrorCode.INVALID_CURSOR) from exc

    def remove(self, tenant: TenantContext, address: str, topic: str) -> None:
        """Mail of ``topic`` goes to ``address`` again; written with its audit entry."""
        audit = entry(
            tenant.tenant_id, now_iso(), tenant.actor, AuditAction.UNSUBSCRIBE_REMOVED, address, topic=topic
        )
        if not self._unsubscribes.remove(tenant.tenant_id, address, topic, audit):
            raise HeraldError(
                "This address is not unsubscribed from this topic.", ErrorCode.UNSUBSCRIBE_NOT_FOUND
            )
