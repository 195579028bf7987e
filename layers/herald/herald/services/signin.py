"""Sign-up and sign-in to the console by a one-time code sent from the platform's address.

Both requests answer the same whatever the address: a sign-up of an address that has an account
sends that account a sign-in code, a sign-in of an address without one sends a note saying so, and
only the address's owner reads the difference. Verifying a code creates the free tenant on first
use (showing its first API key once) and starts a session.

DynamoDB per code request: 2 throttle updates, 1 GetItem (the address's tenant), 1 PutItem (the
code), then 1 SES send; per verification: 1 GetItem, 1 conditional DeleteItem, a tenant's creation
on first use, 1 PutItem (the session).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

import msgspec

from herald.domain.account import ACTIVE
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.plans import Plan
from herald.domain.signin import (
    CODE_TTL_SECONDS,
    CODES_PER_ADDRESS,
    CODES_PER_CLIENT,
    MAX_CODE_TRIES,
    THROTTLE_WINDOW_SECONDS,
    CodePurpose,
    PendingCode,
    address_key,
    code_digest,
    new_code,
    normalized_email,
)
from herald.observability import logger
from herald.services.ports.platform import PlatformMail
from herald.services.ports.tenants import SignInStore, TenantStore
from herald.services.sessions import SessionAuthenticator, StartedSession
from herald.services.tenants import TenantAdmin


class SignedIn(msgspec.Struct, frozen=True):
    session: StartedSession
    tenant_id: str
    # The first API key of a tenant this sign-in created, shown this once; None otherwise.
    api_key: str | None = None


def _invalid_code(detail: str = "") -> HeraldError:
    return HeraldError(
        f"The code is not valid{detail}; ask for a new one if it expired.", ErrorCode.INVALID_CODE
    )


class SignInService:
    def __init__(
        self,
        *,
        store: SignInStore,
        tenants: TenantStore,
        sessions: SessionAuthenticator,
        mail: PlatformMail,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._tenants = tenants
        self._admin = TenantAdmin(tenants)
        self._sessions = sessions
        self._mail = mail
        self._clock = clock

    def request_code(
        self, purpose: CodePurpose, email: str, client_ip: str, console_url: str, name: str | None = None
    ) -> None:
        key = address_key(email)
        self._throttle(key, client_ip)
        tenant_id = self._tenants.tenant_for_email(key)
        if tenant_id is None and purpose is CodePurpose.SIGN_IN:
            self._send(email, "Sign in to Herald", _no_account(console_url))
            return
        code, salt = new_code(), secrets.token_hex(8)
        pending = PendingCode(
            address_key=key,
            digest=code_digest(salt, code),
            salt=salt,
            expires_at=int(self._clock()) + CODE_TTL_SECONDS,
            name=name if tenant_id is None else None,
            tenant_id=tenant_id,
        )
        self._store.save_code(pending)
        existing = tenant_id is not None and purpose is CodePurpose.SIGN_UP
        self._send(email, f"Your Herald code: {code}", _code_text(code, existing))

    def verify(self, email: str, code: str) -> SignedIn:
        key = address_key(email)
        pending = self._store.code(key)
        if pending is None or not pending.usable(self._clock()):
            raise _invalid_code()
        if not pending.matches(code):
            self._store.wrong_try(pending)
            left = MAX_CODE_TRIES - pending.tries - 1
            raise _invalid_code(f" ({left} tries left)" if left > 0 else " and is now locked")
        if not self._store.use_code(pending):
            raise _invalid_code()
        tenant_id = pending.tenant_id or self._tenants.tenant_for_email(key)
        api_key = None
        if tenant_id is None:
            issued = self._admin.create(
                pending.name or normalized_email(email), normalized_email(email), Plan.FREE
            )
            tenant_id, api_key = issued.tenant_id, issued.api_key
            logger.info("tenant signed up", extra={"tenant_id": tenant_id})
        elif self._tenants.profile(tenant_id).status != ACTIVE:
            raise HeraldError("This tenant is disabled.", ErrorCode.TENANT_DISABLED)
        return SignedIn(self._sessions.start(tenant_id), tenant_id, api_key)

    def _throttle(self, key: str, client_ip: str) -> None:
        now = int(self._clock())
        window = now - now % THROTTLE_WINDOW_SECONDS
        allowed = self._store.count_request(f"client:{client_ip}", window, CODES_PER_CLIENT)
        allowed = allowed and self._store.count_request(f"address:{key}", window, CODES_PER_ADDRESS)
        if not allowed:
            retry_after = window + THROTTLE_WINDOW_SECONDS - now
            raise HeraldError(
                f"Too many code requests; retry in {retry_after // 60 + 1} minutes.",
                ErrorCode.RATE_LIMIT_EXCEEDED,
                extra={"retryAfter": retry_after},
            )

    def _send(self, to: str, subject: str, text: str) -> None:
        try:
            self._mail.send(to, subject, text)
        except DependencyError as exc:
            logger.error("sign-in mail not sent", extra={"reason": str(exc)})
            raise HeraldError(
                "Herald could not send the email right now; retry shortly.", ErrorCode.DEPENDENCY_UNAVAILABLE
            ) from exc


def _code_text(code: str, existing: bool) -> str:
    opening = (
        "This address already has a Herald account; this code signs you in to it."
        if existing
        else "Enter this code in the Herald console to continue."
    )
    return (
        f"{opening}\n\n    {code}\n\nThe code works once, for {CODE_TTL_SECONDS // 60} minutes. "
        "If you did not ask for it, ignore this email."
    )


def _no_account(console_url: str) -> str:
    return (
        "Someone asked to sign in to Herald with this address, but it has no account.\n\n"
        f"To create one, sign up at {console_url}\n\nIf you did not ask, ignore this email."
    )
