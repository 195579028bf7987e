"""A worker's view of a tenant, read once per delivery pass: its status, provider order, decrypted
credentials, verified domains and signing secrets.

Nothing about a tenant is kept between passes, so a provider removed, reordered or re-keyed, a
domain deleted or a tenant disabled holds for the next pass in every container: an email pass reads
the tenant's partition (1 strongly consistent Query), a webhook its profile (1 GetItem). Plaintext
secrets are decrypted per use, never kept; the vault's cache of data keys (immutable for a wrapped
key) spares KMS a call per message.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from herald.domain.account import ACTIVE, TenantProfile, TenantRecords
from herald.domain.attempts import AttemptOutcome
from herald.domain.clock import parse_iso, utc_now
from herald.domain.errors import DependencyError
from herald.domain.events import SubscriptionSecrets
from herald.domain.notifications import WebhookNotification
from herald.domain.providers import Credential, StoredProvider
from herald.domain.secrets import Purpose, SealedSecret
from herald.services.outcomes import TenantNotFound
from herald.services.ports.platform import SecretBox
from herald.services.ports.tenants import TenantStore
from herald.services.webhook_headers import opened

if TYPE_CHECKING:
    from herald.services.health import EndpointPass, SubscriptionPass


class TenantDirectory:
    def __init__(
        self, store: TenantStore, secrets: SecretBox, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self._store = store
        self._secrets = secrets
        self._clock = clock

    def records(self, tenant_id: str) -> TenantRecords:
        """The tenant's profile, providers in priority order and domains, as stored now."""
        return self._store.load(tenant_id)

    def profile(self, tenant_id: str) -> TenantProfile:
        return self._store.profile(tenant_id)

    def credential(self, stored: StoredProvider, tenant_id: str) -> Credential:
        token = stored.account_token
        return Credential(
            api_key=self._secrets.open(tenant_id, Purpose.PROVIDER_KEY, stored.api_key),
            account_token=self._secrets.open(tenant_id, Purpose.PROVIDER_KEY, token) if token else None,
        )

    def webhook_headers(self, webhook: WebhookNotification, tenant_id: str) -> WebhookNotification:
        """The webhook with its custom headers opened, just before it is sent."""
        return opened(self._secrets, tenant_id, webhook)

    def signing_secrets(self, profile: TenantProfile) -> list[str]:
        """Oldest first: the previous secret while its overlap lasts, then the current one (both
        signatures are promised during a rotation)."""
        return opened_secrets(
            self._secrets,
            profile.tenant_id,
            Purpose.SIGNING_SECRET,
            (profile.signing_secret, profile.previous_signing_secret, profile.previous_valid_until),
            self._clock(),
        )

    def subscription_secrets(self, tenant_id: str, secrets: SubscriptionSecrets) -> list[str]:
        return opened_subscription_secrets(self._secrets, tenant_id, secrets, self._clock())


def opened_subscription_secrets(
    box: SecretBox, tenant_id: str, secrets: SubscriptionSecrets, now: datetime
) -> list[str]:
    """A subscription's secrets, as ``signing_secrets`` orders the account's (a delivery's and a
    test send's)."""
    kept = (secrets.current, secrets.previous, secrets.previous_valid_until)
    return opened_secrets(box, tenant_id, Purpose.SUBSCRIPTION_SECRET, kept, now)


def opened_secrets(
    box: SecretBox,
    tenant_id: str,
    purpose: Purpose,
    kept: tuple[SealedSecret | None, SealedSecret | None, str | None],
    now: datetime,
) -> list[str]:
    """``kept`` (the current secret, the previous one and until when it signs) in clear, oldest
    first: the previous one while its overlap lasts, then the current one."""
    current, previous, previous_valid_until = kept
    opened: list[str] = []
    if previous is not None and previous_valid_until and parse_iso(previous_valid_until) > now:
        opened.append(box.open(tenant_id, purpose, previous))
    if current is not None:
        opened.append(box.open(tenant_id, purpose, current))
    return opened


# The reason a job of a disabled tenant ends with; the tenant's operator decided, nobody must act.
TENANT_DISABLED = "the tenant is disabled (tenant_disabled); the job was not sent"
T = TypeVar("T", TenantProfile, TenantRecords, "EndpointPass", "SubscriptionPass")


def tenant_for_pass(read: Callable[[], T], unavailable: str) -> T | AttemptOutcome:
    """What ``read`` returns, or the outcome of a pass that cannot start: the tenant is gone or
    disabled (the job ends), or the table did not answer (``unavailable``: a later pass may)."""
    try:
        tenant = read()
    except TenantNotFound:
        return AttemptOutcome(delivered=False, error_message="the tenant no longer exists", final=True)
    except DependencyError as exc:
        return AttemptOutcome(delivered=False, error_message=f"{unavailable}: {exc}")
    profile = tenant if isinstance(tenant, TenantProfile) else tenant.profile
    if profile.status != ACTIVE:
        return AttemptOutcome(
            delivered=False, error_message=TENANT_DISABLED, final=True, caused_by_tenant=True
        )
    return tenant
