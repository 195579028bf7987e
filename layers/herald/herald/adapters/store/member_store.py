"""Data access for a tenant's members and the accounts a person belongs to.

A member is two items: its record in the tenant's partition (read by every request with the rest of
the partition, so a role change or a removal holds from the next request) and the person's
membership (``PERSON#<address key>``, one item per account, so sign-in lists a person's accounts
with one Query). Both change in one transaction with the audit entry. Each transaction is
conditioned on what the change was decided from: the member's role as read, and, where the change
takes an owner away, another owner still being an active owner, so two owners demoting or removing
each other at once cannot leave the account without one (one of the two transactions fails).

DynamoDB calls: invite, change a role, remove, join = 1 transaction each; a person's accounts =
1 Query (one partition, a few hundred bytes per account).
"""

from __future__ import annotations

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action
from pynamodb.transactions import TransactWrite

from herald.adapters.store.access_items import (
    member_item,
    membership_from,
    membership_item,
)
from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.models import (
    MemberItem,
    MembershipItem,
    member_sk,
    person_pk,
    tenant_pk,
)
from herald.adapters.store.table import Table, transaction, translated
from herald.domain.access import Member, MemberStatus, Role
from herald.domain.audit import AuditEntry
from herald.domain.members import Membership
from herald.domain.signin import address_key
from herald.services.outcomes import MemberChanged


def _member_changed(codes: list[str | None]) -> Exception | None:
    return MemberChanged() if "ConditionalCheckFailed" in codes else None


class DynamoMemberStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def invite(
        self, tenant_id: str, tenant_name: str, member: Member, audit: AuditEntry, lapsed: Member | None
    ) -> None:
        """The membership item is the address's one place per account: its condition keeps one
        address from being invited twice, however many invitations race."""
        membership = membership_item(self._table, tenant_id, tenant_name, member)
        with transaction(self._table.connection, "member write", _member_changed) as tx:
            if lapsed is None:
                tx.save(membership, condition=MembershipItem.pk.does_not_exist())
            else:
                tx.delete(self._member(tenant_id, lapsed), condition=_invited(lapsed))
                # The lapsed invitation's membership, unless its expiry removed it already.
                tx.save(
                    membership,
                    condition=MembershipItem.pk.does_not_exist()
                    | (MembershipItem.member_id == lapsed.member_id),
                )
            tx.save(member_item(self._table, tenant_id, member), condition=MemberItem.pk.does_not_exist())
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def change_role(
        self, tenant_id: str, member: Member, changed: Member, audit: AuditEntry, keeper: Member | None
    ) -> None:
        actions: list[Action] = [MemberItem.role.set(changed.role.value)]
        if changed.sessions_valid_from not in (None, member.sessions_valid_from):
            actions.append(MemberItem.sessions_valid_from.set(changed.sessions_valid_from))
        with transaction(self._table.connection, "member write", _member_changed) as tx:
            self._keep_owner(tx, tenant_id, keeper)
            tx.update(self._member(tenant_id, member), actions=actions, condition=_as_read(member))
            tx.update(
                self._membership(tenant_id, member),
                actions=[MembershipItem.role.set(changed.role.value)],
                condition=MembershipItem.member_id == member.member_id,
            )
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def remove(self, tenant_id: str, member: Member, audit: AuditEntry, keeper: Member | None) -> None:
        with transaction(self._table.connection, "member write", _member_changed) as tx:
            self._keep_owner(tx, tenant_id, keeper)
            tx.delete(self._member(tenant_id, member), condition=_as_read(member))
            tx.delete(self._membership(tenant_id, member))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def join(self, tenant_id: str, member: Member, audit: AuditEntry) -> None:
        """Both items lose their expiry: an accepted invitation is a member for good."""
        joined_at = member.joined_at or ""
        joined = [MemberItem.status.set(MemberStatus.ACTIVE.value), MemberItem.joined_at.set(joined_at)]
        with transaction(self._table.connection, "member write", _member_changed) as tx:
            tx.update(
                self._member(tenant_id, member),
                actions=[*joined, MemberItem.expires_at.remove()],
                condition=_invited(member),
            )
            tx.update(
                self._membership(tenant_id, member),
                actions=[
                    MembershipItem.status.set(MemberStatus.ACTIVE.value),
                    MembershipItem.joined_at.set(joined_at),
                    MembershipItem.expires_at.remove(),
                ],
                condition=MembershipItem.member_id == member.member_id,
            )
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def memberships(self, address_key: str) -> list[Membership]:
        with translated("member read"):
            items = list(self._table[MembershipItem].query(person_pk(address_key), consistent_read=True))
        return [membership_from(item) for item in items]

    def _keep_owner(self, tx: TransactWrite, tenant_id: str, keeper: Member | None) -> None:
        if keeper is not None:
            tx.condition_check(
                self._table[MemberItem],
                tenant_pk(tenant_id),
                member_sk(keeper.member_id),
                condition=(MemberItem.role == Role.OWNER.value)
                & (MemberItem.status == MemberStatus.ACTIVE.value),
            )

    def _member(self, tenant_id: str, member: Member) -> MemberItem:
        return self._table[MemberItem](tenant_pk(tenant_id), member_sk(member.member_id))

    def _membership(self, tenant_id: str, member: Member) -> MembershipItem:
        return self._table[MembershipItem](person_pk(address_key(member.email)), tenant_pk(tenant_id))


def _as_read(member: Member) -> Condition:
    """The member is still there with the role (and status) the change was decided from."""
    condition: Condition = (MemberItem.role == member.role.value) & (MemberItem.status == member.status.value)
    return condition


def _invited(member: Member) -> Condition:
    condition: Condition = (MemberItem.member_id == member.member_id) & (
        MemberItem.status == MemberStatus.INVITED.value
    )
    return condition
