"""Composition root of the ConsoleFunction: sign-up, sign-in and sign-out, and switching between
the accounts a person belongs to, built once per container.

No tenant state is cached: codes, sessions and tenants are read on every request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from herald.adapters.platform_mail import SesPlatformMail
from herald.adapters.providers.ses_tenants import SesTenants
from herald.adapters.store.member_store import DynamoMemberStore
from herald.adapters.store.signin_store import DynamoSessions, DynamoSignIn
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import foundation, once
from herald.services.members import PersonAccounts
from herald.services.sessions import SessionAuthenticator
from herald.services.signin import SignInService
from herald.settings import SignInSettings

if TYPE_CHECKING:
    from herald.services.unsubscribes import OneClick


class ConsoleServices:
    def __init__(self) -> None:
        base = foundation()
        tenants, members = DynamoTenantStore(base.table), DynamoMemberStore(base.table)
        self.sessions = SessionAuthenticator(DynamoSessions(base.table), tenants)
        mail = SesPlatformMail(base.clients.sesv2, base.settings.platform_sender)
        self.signin = SignInService(
            store=DynamoSignIn(base.table),
            tenants=tenants,
            members=members,
            sessions=self.sessions,
            mail=mail,
            limits=SignInSettings.from_env().limits,
            # A sign-up's free account gets its own SES tenant.
            ses_tenants=SesTenants(base.clients.sesv2, base.settings.platform_sender),
        )
        self.accounts = PersonAccounts(tenants, members, self.sessions)


def console_services() -> ConsoleServices:
    return once(ConsoleServices)


def _one_click() -> OneClick:
    """Built by the first unsubscribe link's request: sign-in never reads the signing key."""
    from herald.adapters.platform_secrets import SsmSecret
    from herald.adapters.store.unsubscribe_store import DynamoUnsubscribes
    from herald.services.unsubscribes import OneClick
    from herald.settings import UnsubscribeSettings

    base = foundation()
    key = SsmSecret(UnsubscribeSettings.from_env().key_parameter, base.clients.ssm)
    return OneClick(key, DynamoUnsubscribes(base.table))


def one_click() -> OneClick:
    return once(_one_click)
