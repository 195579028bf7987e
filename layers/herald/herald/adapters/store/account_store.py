"""Data access of the account routes: provider credentials, signing secrets and sending domains.
All items live in the tenant's partition except the domain claim (one per domain, so a domain
belongs to one tenant)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pynamodb.exceptions import DoesNotExist

from herald.adapters.store.conversions import domain_from, domain_item, provider_item, to_attribute
from herald.adapters.store.models import (
    CLAIM_SK,
    PROFILE_SK,
    DomainClaimItem,
    DomainItem,
    ProviderItem,
    TenantItem,
    domain_claim_pk,
    domain_sk,
    tenant_pk,
)
from herald.adapters.store.table import ConditionFailed, Table, conditional, transaction, translated
from herald.domain.providers import SendingDomain, StoredProvider
from herald.domain.secrets import SealedSecret
from herald.services.outcomes import AlreadyExists, DomainTaken


class DynamoAccountStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    # ------------------------------------------------------------ providers

    def save_provider(self, tenant_id: str, provider: StoredProvider) -> None:
        with translated("provider write"):
            provider_item(self._table, tenant_id, provider).save()

    def delete_provider(
        self, tenant_id: str, removed: StoredProvider, below: Sequence[StoredProvider]
    ) -> None:
        """Remove a provider and move each one ranked below it up by one, atomically, so the
        priorities stay 1..n with one holder each."""
        with transaction(self._table.connection, "provider delete") as tx:
            tx.delete(
                provider_item(self._table, tenant_id, removed),
                condition=ProviderItem.priority == removed.priority,
            )
            for item in below:
                tx.update(
                    provider_item(self._table, tenant_id, item),
                    actions=[ProviderItem.priority.set(item.priority - 1)],
                    condition=ProviderItem.priority == item.priority,
                )

    def swap_priorities(
        self, tenant_id: str, moved: StoredProvider, new_priority: int, holder: StoredProvider | None
    ) -> None:
        """Give ``moved`` the priority ``holder`` had, and ``holder`` the old one, atomically."""
        with transaction(self._table.connection, "provider priority write") as tx:
            tx.update(
                provider_item(self._table, tenant_id, moved),
                actions=[ProviderItem.priority.set(new_priority)],
                condition=ProviderItem.priority == moved.priority,
            )
            if holder is not None:
                tx.update(
                    provider_item(self._table, tenant_id, holder),
                    actions=[ProviderItem.priority.set(moved.priority)],
                    condition=ProviderItem.priority == new_priority,
                )

    # ------------------------------------------------------------ signing secret

    def set_signing_secret(
        self,
        tenant_id: str,
        secret: SealedSecret,
        created_at: str,
        *,
        require_absent: bool,
        previous: SealedSecret | None = None,
        previous_valid_until: str | None = None,
    ) -> None:
        actions: list[Any] = [
            TenantItem.signing_secret.set(to_attribute(secret)),
            TenantItem.signing_secret_created_at.set(created_at),
        ]
        if previous is not None and previous_valid_until is not None:
            actions += [
                TenantItem.previous_signing_secret.set(to_attribute(previous)),
                TenantItem.previous_valid_until.set(previous_valid_until),
            ]
        condition = TenantItem.signing_secret.does_not_exist() if require_absent else TenantItem.pk.exists()
        try:
            with conditional("signing secret write"):
                self._table[TenantItem](tenant_pk(tenant_id), PROFILE_SK).update(
                    actions=actions, condition=condition
                )
        except ConditionFailed as exc:
            raise AlreadyExists(tenant_id) from exc

    def delete_signing_secret(self, tenant_id: str) -> None:
        with translated("signing secret delete"):
            self._table[TenantItem](tenant_pk(tenant_id), PROFILE_SK).update(
                actions=[
                    TenantItem.signing_secret.remove(),
                    TenantItem.signing_secret_created_at.remove(),
                    TenantItem.previous_signing_secret.remove(),
                    TenantItem.previous_valid_until.remove(),
                ]
            )

    # ------------------------------------------------------------ domains

    def claim_domain(self, tenant_id: str, domain: SendingDomain) -> None:
        """Register the domain for this tenant; DomainTaken when another tenant owns it."""
        claim = self._table[DomainClaimItem](domain_claim_pk(domain.domain), CLAIM_SK, tenant_id=tenant_id)

        def refine(codes: list[str | None]) -> Exception | None:
            return DomainTaken(domain.domain) if codes and codes[0] == "ConditionalCheckFailed" else None

        with transaction(self._table.connection, "domain write", refine) as tx:
            tx.save(
                claim,
                condition=DomainClaimItem.pk.does_not_exist() | (DomainClaimItem.tenant_id == tenant_id),
            )
            tx.save(domain_item(self._table, tenant_id, domain))

    def domain(self, tenant_id: str, name: str) -> SendingDomain | None:
        with translated("domain read"):
            try:
                item: DomainItem = self._table[DomainItem].get(tenant_pk(tenant_id), domain_sk(name))
            except DoesNotExist:
                return None
        return domain_from(item)

    def save_domain(self, tenant_id: str, domain: SendingDomain) -> None:
        with translated("domain write"):
            domain_item(self._table, tenant_id, domain).save()

    def delete_domain(self, tenant_id: str, name: str) -> None:
        with transaction(self._table.connection, "domain delete") as tx:
            tx.delete(self._table[DomainItem](tenant_pk(tenant_id), domain_sk(name)))
            tx.delete(
                self._table[DomainClaimItem](domain_claim_pk(name), CLAIM_SK),
                condition=DomainClaimItem.tenant_id == tenant_id,
            )
