"""Composition root of the ConsoleFunction: sign-up, sign-in and sign-out, built once per container.

No tenant state is cached: codes, sessions and tenants are read on every request.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from herald.adapters.platform_mail import SesPlatformMail
from herald.adapters.store.signin_store import DynamoSessions, DynamoSignIn
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import foundation
from herald.services.sessions import SessionAuthenticator
from herald.services.signin import SignInService


@dataclass(frozen=True)
class ConsoleServices:
    signin: SignInService
    sessions: SessionAuthenticator


@lru_cache(maxsize=1)
def console_services() -> ConsoleServices:
    base = foundation()
    tenants = DynamoTenantStore()
    sessions = SessionAuthenticator(DynamoSessions(), tenants)
    mail = SesPlatformMail(base.clients.sesv2, base.settings.platform_sender)
    return ConsoleServices(
        signin=SignInService(store=DynamoSignIn(), tenants=tenants, sessions=sessions, mail=mail),
        sessions=sessions,
    )
