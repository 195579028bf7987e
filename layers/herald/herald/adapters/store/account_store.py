"""Data access of the account routes: provider credentials, signing secrets, sending domains,
suppressions and usage. All items live in the tenant's partition except the domain claim (one per
domain, so a domain belongs to one tenant) and the suppression list (its own partition)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pynamodb.exceptions import DoesNotExist, PynamoDBException, TransactWriteError
from pynamodb.transactions import TransactWrite

from herald.adapters.store.delivery_store import suppression_pk
from herald.adapters.store.models import (
    DomainClaim,
    HeraldItem,
    ProviderCredential,
    SealedAttribute,
    SendingDomain,
    Suppression,
    TenantProfile,
    UsageCounter,
    tenant_pk,
)
from herald.adapters.store.table import cancellation_codes, connection
from herald.domain.errors import DependencyError

T = TypeVar("T")


class DomainTaken(Exception):
    """Another tenant already registered this domain."""


class AlreadyExists(Exception):
    pass


def _guarded(what: str, call: Callable[[], T]) -> T:
    try:
        return call()
    except DoesNotExist:
        raise
    except PynamoDBException as exc:
        if exc.cause_response_code == "ConditionalCheckFailedException":
            raise
        raise DependencyError(f"{what} failed: {exc.cause_response_code}") from exc


def provider_sk(provider: str) -> str:
    return f"PROVIDER#{provider}"


def domain_sk(domain: str) -> str:
    return f"DOMAIN#{domain}"


def domain_claim_pk(domain: str) -> str:
    return f"DOMAIN#{domain}"


class AccountStore:
    # ------------------------------------------------------------ providers

    def save_provider(self, credential: ProviderCredential) -> None:
        _guarded("provider write", credential.save)

    def delete_provider(self, removed: ProviderCredential, below: list[ProviderCredential]) -> None:
        """Remove a provider and move each one ranked below it up by one, atomically, so the
        priorities stay 1..n with one holder each."""
        try:
            with TransactWrite(connection=connection()) as tx:
                tx.delete(removed, condition=ProviderCredential.priority == int(removed.priority))
                for item in below:
                    tx.update(
                        item,
                        actions=[ProviderCredential.priority.set(int(item.priority) - 1)],
                        condition=ProviderCredential.priority == int(item.priority),
                    )
        except TransactWriteError as exc:
            raise DependencyError(f"provider delete failed: {exc.cause_response_code}") from exc

    def swap_priorities(
        self, moved: ProviderCredential, new_priority: int, holder: ProviderCredential | None
    ) -> None:
        """Give ``moved`` the priority ``holder`` had, and ``holder`` the old one, atomically."""
        old_priority = int(moved.priority)
        try:
            with TransactWrite(connection=connection()) as tx:
                tx.update(
                    moved,
                    actions=[ProviderCredential.priority.set(new_priority)],
                    condition=ProviderCredential.priority == old_priority,
                )
                if holder is not None:
                    tx.update(
                        holder,
                        actions=[ProviderCredential.priority.set(old_priority)],
                        condition=ProviderCredential.priority == new_priority,
                    )
        except TransactWriteError as exc:
            raise DependencyError(f"provider priority write failed: {exc.cause_response_code}") from exc

    # ------------------------------------------------------------ signing secret

    def set_signing_secret(
        self,
        tenant_id: str,
        secret: SealedAttribute,
        created_at: str,
        *,
        require_absent: bool,
        previous: SealedAttribute | None = None,
        previous_valid_until: str | None = None,
    ) -> None:
        profile = TenantProfile(tenant_pk(tenant_id), "PROFILE")
        actions: list[Any] = [
            TenantProfile.signing_secret.set(secret),
            TenantProfile.signing_secret_created_at.set(created_at),
        ]
        if previous is not None and previous_valid_until is not None:
            actions += [
                TenantProfile.previous_signing_secret.set(previous),
                TenantProfile.previous_valid_until.set(previous_valid_until),
            ]
        condition = (
            TenantProfile.signing_secret.does_not_exist() if require_absent else TenantProfile.pk.exists()
        )
        try:
            _guarded("signing secret write", lambda: profile.update(actions=actions, condition=condition))
        except PynamoDBException as exc:
            raise AlreadyExists(tenant_id) from exc

    def delete_signing_secret(self, tenant_id: str) -> None:
        profile = TenantProfile(tenant_pk(tenant_id), "PROFILE")
        _guarded(
            "signing secret delete",
            lambda: profile.update(
                actions=[
                    TenantProfile.signing_secret.remove(),
                    TenantProfile.signing_secret_created_at.remove(),
                    TenantProfile.previous_signing_secret.remove(),
                    TenantProfile.previous_valid_until.remove(),
                ]
            ),
        )

    # ------------------------------------------------------------ domains

    def claim_domain(self, tenant_id: str, domain: SendingDomain) -> None:
        """Register the domain for this tenant; DomainTaken when another tenant owns it."""
        claim = DomainClaim(domain_claim_pk(domain.domain), "CLAIM", tenant_id=tenant_id)
        try:
            with TransactWrite(connection=connection()) as tx:
                tx.save(
                    claim,
                    condition=DomainClaim.pk.does_not_exist() | (DomainClaim.tenant_id == tenant_id),
                )
                tx.save(domain)
        except TransactWriteError as exc:
            reasons = cancellation_codes(exc)
            if reasons and reasons[0] == "ConditionalCheckFailed":
                raise DomainTaken(domain.domain) from exc
            raise DependencyError(f"domain write failed: {exc.cause_response_code}") from exc

    def domain(self, tenant_id: str, name: str) -> SendingDomain | None:
        try:
            found: SendingDomain = _guarded(
                "domain read", lambda: SendingDomain.get(tenant_pk(tenant_id), domain_sk(name))
            )
        except DoesNotExist:
            return None
        return found

    def save_domain(self, domain: SendingDomain) -> None:
        _guarded("domain write", domain.save)

    def delete_domain(self, tenant_id: str, name: str) -> None:
        try:
            with TransactWrite(connection=connection()) as tx:
                tx.delete(SendingDomain(tenant_pk(tenant_id), domain_sk(name)))
                tx.delete(
                    DomainClaim(domain_claim_pk(name), "CLAIM"), condition=DomainClaim.tenant_id == tenant_id
                )
        except TransactWriteError as exc:
            raise DependencyError(f"domain delete failed: {exc.cause_response_code}") from exc

    # ------------------------------------------------------------ suppressions and usage

    def suppressions(self, tenant_id: str) -> Iterator[Suppression]:
        try:
            for item in HeraldItem.query(suppression_pk(tenant_id)):
                if isinstance(item, Suppression):
                    yield item
        except PynamoDBException as exc:
            raise DependencyError(f"suppression read failed: {exc.cause_response_code}") from exc

    def delete_suppression(self, tenant_id: str, address: str) -> bool:
        item = Suppression(suppression_pk(tenant_id), address.lower())
        try:
            _guarded("suppression delete", lambda: item.delete(condition=Suppression.pk.exists()))
        except PynamoDBException:
            return False
        return True

    def usage(self, tenant_id: str, period: str) -> UsageCounter | None:
        try:
            found: UsageCounter = _guarded(
                "usage read", lambda: UsageCounter.get(f"USAGE#{tenant_id}#{period}", "USAGE")
            )
        except DoesNotExist:
            return None
        return found
