"""Data access of the inbound webhooks: job events, dedupe marks and payment processors' links.

DynamoDB calls: expiry = 1 eventually consistent GetItem of the job's small status item; add and
mark = 1 conditional PutItem each (the condition is the dedupe guard); remove and unmark = 1
DeleteItem; tenant_for = 1 GetItem; link = 1 PutItem per reference.
"""

from __future__ import annotations

from collections.abc import Sequence

from pynamodb.exceptions import DoesNotExist

from herald.adapters.store.models import (
    LINK_SK,
    SEEN_SK,
    STATUS_SK,
    BillingLinkItem,
    HeraldItem,
    InboundMarkItem,
    JobEventItem,
    JobStatusItem,
    billing_link_pk,
    event_sk,
    inbound_pk,
    job_pk,
)
from herald.adapters.store.table import ConditionFailed, Table, conditional, translated
from herald.domain.inbound import Processor
from herald.domain.job_records import JobEvent


class DynamoJobEvents:
    def __init__(self, table: Table) -> None:
        self._table = table

    def expiry(self, tenant_id: str, job_id: str) -> int | None:
        with translated("job table read"):
            try:
                item: JobStatusItem = self._table[JobStatusItem].get(
                    job_pk(tenant_id, job_id), STATUS_SK, attributes_to_get=["kind", "expiresAt"]
                )
            except DoesNotExist:
                return None
        # A job whose status item has no expiry was never claimed, so never handed to a provider.
        return None if item.expires_at is None else int(item.expires_at)

    def add(self, tenant_id: str, job_id: str, event_id: str, event: JobEvent, expires_at: int) -> bool:
        item = self._table[JobEventItem](
            job_pk(tenant_id, job_id),
            event_sk(event.provider or "", event_id),
            type=event.type,
            occurred_at=event.occurred_at,
            provider=event.provider,
            reason=event.reason,
            received_at=event.received_at,
            expires_at=expires_at,
        )
        return _put_once(item, "job event write")

    def remove(self, tenant_id: str, job_id: str, event_id: str, event: JobEvent) -> None:
        with translated("job event delete"):
            self._table[JobEventItem](
                job_pk(tenant_id, job_id), event_sk(event.provider or "", event_id)
            ).delete()


class DynamoInboundLedger:
    def __init__(self, table: Table) -> None:
        self._table = table

    def mark(self, key: str, expires_at: int | None) -> bool:
        return _put_once(
            self._table[InboundMarkItem](inbound_pk(key), SEEN_SK, expires_at=expires_at),
            "inbound mark write",
        )

    def unmark(self, key: str) -> None:
        with translated("inbound mark delete"):
            self._table[InboundMarkItem](inbound_pk(key), SEEN_SK).delete()


class DynamoBillingLinks:
    def __init__(self, table: Table) -> None:
        self._table = table

    def tenant_for(self, processor: Processor, ref: str) -> str | None:
        with translated("billing link read"):
            try:
                item: BillingLinkItem = self._table[BillingLinkItem].get(
                    billing_link_pk(processor.value, ref), LINK_SK
                )
            except DoesNotExist:
                return None
        return item.tenant_id

    def link(self, processor: Processor, refs: Sequence[str], tenant_id: str) -> None:
        with translated("billing link write"):
            for ref in refs:
                self._table[BillingLinkItem](
                    billing_link_pk(processor.value, ref), LINK_SK, tenant_id=tenant_id
                ).save()


def _put_once(item: HeraldItem, what: str) -> bool:
    """Write the item unless it exists; False when it does (the event was handled already)."""
    try:
        with conditional(what):
            item.save(condition=HeraldItem.pk.does_not_exist())
    except ConditionFailed:
        return False
    return True
