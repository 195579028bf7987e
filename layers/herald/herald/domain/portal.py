"""The portal: a tenant hands one of its customers a one-time link, and the customer manages its own
subscriptions on a small page of Herald's, without an account of its own.

A link's token is 256 random bits; only its SHA-256 is stored, with the tenant, the subscriber id the
link is for and its expiry. Opening the link uses it up: it is exchanged, once, for a portal session
(another random token, stored the same way, in an HttpOnly cookie that only the portal's routes
receive). A session is scoped to its tenant and subscriber id: the portal's routes reach that
subscriber's subscriptions and nothing else of the account. A link without a subscriber id manages
every subscription of the tenant (the tenant's own staff without a console seat); a link meant for a
customer names the customer.
"""

from __future__ import annotations

import secrets

import msgspec

# How long a link may stay unopened: at least a minute, at most a week (a link mailed to a customer
# who opens it the next Monday).
MIN_LINK_TTL_SECONDS = 60
MAX_LINK_TTL_SECONDS = 7 * 24 * 3600
# How long a session lasts once the link is opened, whatever the link's own ttl was: a sitting, not
# a standing credential (the tenant makes a new link for the next one).
PORTAL_SESSION_SECONDS = 2 * 3600
PORTAL_COOKIE = "herald_portal"
# The cookie goes to the portal's API routes only: the page and every other route never receive it.
PORTAL_API_PREFIX = "/api/v1/portal"
# Where the page exchanges its link's token for the session (the one portal route without a session).
PORTAL_SESSION_PATH = f"{PORTAL_API_PREFIX}/session"
PORTAL_PAGE = "/portal"
# What the audit entry names as target (and the portal actor as id) for a link without a subscriber.
EVERY_SUBSCRIBER = "all"


def new_portal_token() -> str:
    """256 random bits, URL-safe (43 characters)."""
    return secrets.token_urlsafe(32)


class PortalLink(msgspec.Struct, frozen=True):
    """A link not yet opened, by its token's SHA-256."""

    token_digest: str
    tenant_id: str
    created_at: str
    expires_at: int
    # None: every subscription of the tenant.
    subscriber_id: str | None = None

    def live(self, now: float) -> bool:
        return now < self.expires_at


class PortalSession(msgspec.Struct, frozen=True):
    """An opened link's session, by its token's SHA-256: as narrow as the link it came from."""

    token_digest: str
    tenant_id: str
    created_at: str
    expires_at: int
    subscriber_id: str | None = None

    def live(self, now: float) -> bool:
        return now < self.expires_at


def link_url(origin: str, token: str) -> str:
    """The token rides in the fragment: browsers never send it to a server, so it is in no access
    log or Referer; the page's script reads it and exchanges it."""
    return f"{origin}{PORTAL_PAGE}#{token}"
