"""Data access for the portal's links and sessions.

DynamoDB calls: a new link = 1 transaction (the link and its audit entry); opening it = 1 consistent
GetItem + 1 transaction (delete the link, on the condition that it is still there and unexpired, and
put the session): two requests racing with one link start one session. A portal request = 1
consistent GetItem of its session; signing out = 1 DeleteItem. Each item expires by TTL; readers
check the expiry themselves too (TTL deletion is lazy).
"""

from __future__ import annotations

from pynamodb.exceptions import DoesNotExist

from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.models import LINK_SK, SESSION_SK, PortalLinkItem, PortalSessionItem, portal_pk
from herald.adapters.store.table import Table, transaction, translated
from herald.domain.audit import AuditEntry
from herald.domain.portal import PortalLink, PortalSession

WHAT = "portal write"


class _LinkGone(Exception):
    """The link's delete condition failed: it was opened (or expired) meanwhile."""


def _gone(codes: list[str | None]) -> Exception | None:
    return _LinkGone() if "ConditionalCheckFailed" in codes else None


class DynamoPortal:
    def __init__(self, table: Table) -> None:
        self._table = table

    def create_link(self, link: PortalLink, audit: AuditEntry) -> None:
        item = self._table[PortalLinkItem](
            portal_pk(link.token_digest),
            LINK_SK,
            tenant_id=link.tenant_id,
            created_at=link.created_at,
            subscriber_id=link.subscriber_id,
            expires_at=link.expires_at,
        )
        with transaction(self._table.connection, WHAT) as tx:
            tx.save(item, condition=PortalLinkItem.pk.does_not_exist())
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def link(self, token_digest: str) -> PortalLink | None:
        with translated("portal read"):
            try:
                item = self._table[PortalLinkItem].get(portal_pk(token_digest), LINK_SK, consistent_read=True)
            except DoesNotExist:
                return None
        return PortalLink(
            token_digest, item.tenant_id, item.created_at, int(item.expires_at or 0), item.subscriber_id
        )

    def open(self, link: PortalLink, session: PortalSession, now: int) -> bool:
        used = self._table[PortalLinkItem](portal_pk(link.token_digest), LINK_SK)
        started = self._table[PortalSessionItem](
            portal_pk(session.token_digest),
            SESSION_SK,
            tenant_id=session.tenant_id,
            created_at=session.created_at,
            subscriber_id=session.subscriber_id,
            expires_at=session.expires_at,
        )
        try:
            with transaction(self._table.connection, WHAT, _gone) as tx:
                tx.delete(used, condition=PortalLinkItem.pk.exists() & (PortalLinkItem.expires_at > now))
                tx.save(started, condition=PortalSessionItem.pk.does_not_exist())
        except _LinkGone:
            return False
        return True

    def session(self, token_digest: str) -> PortalSession | None:
        with translated("portal read"):
            try:
                item = self._table[PortalSessionItem].get(
                    portal_pk(token_digest), SESSION_SK, consistent_read=True
                )
            except DoesNotExist:
                return None
        return PortalSession(
            token_digest, item.tenant_id, item.created_at, int(item.expires_at or 0), item.subscriber_id
        )

    def end(self, token_digest: str) -> None:
        with translated("portal write"):
            self._table[PortalSessionItem](portal_pk(token_digest), SESSION_SK).delete()
