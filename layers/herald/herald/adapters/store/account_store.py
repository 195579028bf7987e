"""Data access of the account routes: provider credentials, signing secrets and sending domains.
All items live in the tenant's partition except the domain claim (one per domain, so a domain
belongs to one tenant).

Every change is one transaction with its audit entry (``audit``, a required argument: a change
without its entry does not type-check); only ``record_registrations``, which stores what the
providers answered to a domain's registration, belongs to the change ``claim_domain`` recorded.
DynamoDB calls: each change = 1 transaction; a domain = 1 GetItem.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pynamodb.exceptions import DoesNotExist

from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
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
from herald.adapters.store.table import Table, transaction, translated
from herald.domain.audit import AuditEntry
from herald.domain.providers import SendingDomain, StoredProvider
from herald.domain.secrets import SealedSecret
from herald.services.outcomes import AlreadyExists, DomainTaken


class DynamoAccountStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    # ------------------------------------------------------------ providers

    def save_provider(self, tenant_id: str, provider: StoredProvider, audit: AuditEntry) -> None:
        with transaction(self._table.connection, "provider write") as tx:
            tx.save(provider_item(self._table, tenant_id, provider))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def delete_provider(
        self, tenant_id: str, removed: StoredProvider, below: Sequence[StoredProvider], audit: AuditEntry
    ) -> None:
        """Remove a provider and move each one ranked below it up by one, atomically, so the
        priorities stay 1..n with one holder each."""
        with transaction(self._table.connection, "provider delete") as tx:
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)
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
        self,
        tenant_id: str,
        moved: StoredProvider,
        new_priority: int,
        holder: StoredProvider | None,
        audit: AuditEntry,
    ) -> None:
        """Give ``moved`` the priority ``holder`` had, and ``holder`` the old one, atomically."""
        with transaction(self._table.connection, "provider priority write") as tx:
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)
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
        audit: AuditEntry,
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

        def refine(codes: list[str | None]) -> Exception | None:
            # The profile's update comes after the entry's put in the transaction's order.
            return AlreadyExists(tenant_id) if codes[-1:] == ["ConditionalCheckFailed"] else None

        with transaction(self._table.connection, "signing secret write", refine) as tx:
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)
            tx.update(
                self._table[TenantItem](tenant_pk(tenant_id), PROFILE_SK),
                actions=actions,
                condition=condition,
            )

    def delete_signing_secret(self, tenant_id: str, audit: AuditEntry) -> None:
        with transaction(self._table.connection, "signing secret delete") as tx:
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)
            tx.update(
                self._table[TenantItem](tenant_pk(tenant_id), PROFILE_SK),
                actions=[
                    TenantItem.signing_secret.remove(),
                    TenantItem.signing_secret_created_at.remove(),
                    TenantItem.previous_signing_secret.remove(),
                    TenantItem.previous_valid_until.remove(),
                ],
                condition=TenantItem.pk.exists(),
            )

    # ------------------------------------------------------------ domains

    def claim_domain(self, tenant_id: str, domain: SendingDomain, audit: AuditEntry) -> None:
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
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def domain(self, tenant_id: str, name: str) -> SendingDomain | None:
        with translated("domain read"):
            try:
                item: DomainItem = self._table[DomainItem].get(tenant_pk(tenant_id), domain_sk(name))
            except DoesNotExist:
                return None
        return domain_from(item)

    def record_registrations(self, tenant_id: str, domain: SendingDomain) -> None:
        """The providers' answers to the registration of a domain ``claim_domain`` just added (and
        recorded): part of that change, not one of its own."""
        with translated("domain write"):
            domain_item(self._table, tenant_id, domain).save(condition=DomainItem.pk.exists())

    def save_domain(self, tenant_id: str, domain: SendingDomain, audit: AuditEntry) -> None:
        with transaction(self._table.connection, "domain write") as tx:
            tx.save(domain_item(self._table, tenant_id, domain))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def delete_domain(self, tenant_id: str, name: str, audit: AuditEntry) -> None:
        with transaction(self._table.connection, "domain delete") as tx:
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)
            tx.delete(self._table[DomainItem](tenant_pk(tenant_id), domain_sk(name)))
            tx.delete(
                self._table[DomainClaimItem](domain_claim_pk(name), CLAIM_SK),
                condition=DomainClaimItem.tenant_id == tenant_id,
            )
