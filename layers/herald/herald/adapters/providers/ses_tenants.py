"""SES tenants on the platform's account: one per free Herald tenant, so that one tenant's bounces
and complaints pause only that tenant's sending and never the account every free tenant shares.

Each SES tenant has the platform's sending identity associated (SES sends with ``TenantName`` only
through resources associated with that tenant) and SES's ``standard`` reputation policy, which
pauses the tenant, not the account, when its bounce or complaint rate crosses SES's thresholds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Final

import msgspec
from botocore.exceptions import BotoCoreError, ClientError

from herald.domain.account import PlatformSending
from herald.domain.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_sesv2 import SESV2Client

# SES: up to 64 letters, digits, hyphens and underscores.
_NAME_LIMIT: Final = 64
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")
_PREFIX: Final = "herald-"
# The only kind of reputation entity SES has: a resource (here, the tenant), named by its ARN.
_ENTITY_TYPE: Final = "RESOURCE"
# SES's AWS-managed policy that pauses an entity whose bounce or complaint rate is too high.
REPUTATION_POLICY: Final = "standard"


class SesSending(StrEnum):
    """Whether the platform's SES sends for a tenant (``SendingStatus`` of ``GetTenant``)."""

    ENABLED = "enabled"
    PAUSED = "paused"
    # Resumed by the operator while reputation findings are still open.
    REINSTATED = "reinstated"


class SesTenant(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    arn: str
    sending: SesSending
    created_at: str | None = None


def ses_tenant_name(tenant_id: str) -> str:
    """The SES tenant of a Herald tenant: a fixed prefix and the id, within SES's name rules."""
    return (_PREFIX + _NOT_ALLOWED.sub("-", tenant_id))[:_NAME_LIMIT]


def _sending(status: str | None) -> SesSending:
    if status == "DISABLED":
        return SesSending.PAUSED
    if status == "REINSTATED":
        return SesSending.REINSTATED
    return SesSending.ENABLED


def _arn_parts(tenant_arn: str) -> tuple[str, str, str]:
    """(partition, region, account) of an SES tenant's ARN: its identity lives in the same account."""
    _, partition, _, region, account, _ = tenant_arn.split(":", 5)
    return partition, region, account


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code") or "")


class SesTenants:
    """Creates, reads and resumes the SES tenants of Herald's free tenants."""

    def __init__(self, client: Callable[[], SESV2Client], sender: str) -> None:
        self._client = client
        self._identity = sender.rsplit("@", 1)[-1]

    def ensure(self, tenant_id: str) -> SesTenant:
        """The tenant's SES tenant, created with its identity and policy if missing (idempotent:
        each step accepts that an earlier, interrupted run already made it)."""
        try:
            return self._ensure(ses_tenant_name(tenant_id))
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"SES tenant not set up: {exc}") from exc

    def status(self, tenant_id: str) -> SesTenant | None:
        """The SES tenant as SES sees it now; None when it was never created."""
        try:
            return self._get(ses_tenant_name(tenant_id))
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"SES tenant unreadable: {exc}") from exc

    def sending(self, tenant_id: str) -> PlatformSending:
        tenant = self.status(tenant_id)
        paused = tenant is not None and tenant.sending is SesSending.PAUSED
        return PlatformSending.PAUSED if paused else PlatformSending.ENABLED

    def resume(self, tenant_id: str) -> SesTenant:
        """Reinstates a paused tenant's sending (SES's customer-managed status); SES still keeps
        it paused while its own, AWS-managed status is disabled."""
        tenant = self.ensure(tenant_id)
        try:
            self._ses().update_reputation_entity_customer_managed_status(
                ReputationEntityType=_ENTITY_TYPE,
                ReputationEntityReference=tenant.arn,
                SendingStatus="REINSTATED",
            )
            resumed = self._get(tenant.name)
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"SES tenant not resumed: {exc}") from exc
        return resumed or tenant

    def paused(self) -> list[str]:
        """The names of the SES tenants whose sending is paused now, every page of them."""
        names: list[str] = []
        request: dict[str, object] = {"Filter": {"SENDING_STATUS": "DISABLED"}, "PageSize": 100}
        try:
            while True:
                page = self._ses().list_tenants(**request)  # type: ignore[arg-type]
                names.extend(tenant["TenantName"] for tenant in page.get("Tenants", []))
                if not page.get("NextToken"):
                    return names
                request["NextToken"] = page["NextToken"]
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"SES tenants unreadable: {exc}") from exc

    def _ses(self) -> SESV2Client:
        return self._client()

    def _ensure(self, name: str) -> SesTenant:
        try:
            created = self._ses().create_tenant(TenantName=name)
            tenant = SesTenant(
                name=name, arn=created["TenantArn"], sending=_sending(created.get("SendingStatus"))
            )
        except ClientError as exc:
            existing = self._get(name) if _code(exc) == "AlreadyExistsException" else None
            if existing is None:
                raise
            tenant = existing
        self._associate(tenant)
        partition, region, _ = _arn_parts(tenant.arn)
        self._ses().update_reputation_entity_policy(
            ReputationEntityType=_ENTITY_TYPE,
            ReputationEntityReference=tenant.arn,
            ReputationEntityPolicy=f"arn:{partition}:ses:{region}:aws:reputation-policy/{REPUTATION_POLICY}",
        )
        return tenant

    def _associate(self, tenant: SesTenant) -> None:
        partition, region, account = _arn_parts(tenant.arn)
        identity = f"arn:{partition}:ses:{region}:{account}:identity/{self._identity}"
        try:
            self._ses().create_tenant_resource_association(TenantName=tenant.name, ResourceArn=identity)
        except ClientError as exc:
            if _code(exc) != "AlreadyExistsException":
                raise

    def _get(self, name: str) -> SesTenant | None:
        try:
            answer = self._ses().get_tenant(TenantName=name)["Tenant"]
        except ClientError as exc:
            if _code(exc) == "NotFoundException":
                return None
            raise
        created = answer.get("CreatedTimestamp")
        return SesTenant(
            name=name,
            arn=answer.get("TenantArn", ""),
            sending=_sending(answer.get("SendingStatus")),
            created_at=created.isoformat() if created else None,
        )
