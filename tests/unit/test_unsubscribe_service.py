"""The public link's service and the tenant's list, over the in-memory store: a link that does not
verify is an unknown page whatever was wrong with it, a replay changes nothing, a resubscribe takes
back only the link's own topic, and the tenant's removal is written with its audit entry."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from herald.domain.account import TenantContext
from herald.domain.audit import AuditAction
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.unsubscribes import (
    ALL_TOPICS,
    Unsubscribe,
    UnsubscribePage,
    UnsubscribeSource,
    sign,
    subscriber,
)
from herald.services.unsubscribes import OneClick, UnsubscribeList
from tests.fakes.common import full_grant
from tests.fakes.tenants import UNSUBSCRIBE_KEY, FakeUnsubscribes

TENANT = "tenant-a"
TOKEN = sign(UNSUBSCRIBE_KEY.encode(), subscriber(TENANT, "Ada@Example.com", "news"))
CALLER = TenantContext(TENANT, "startup", "active", full_grant(), datetime(2026, 12, 4, tzinfo=UTC))


@pytest.fixture
def store() -> FakeUnsubscribes:
    return FakeUnsubscribes()


@pytest.fixture
def links(store: FakeUnsubscribes) -> OneClick:
    return OneClick(lambda: UNSUBSCRIBE_KEY, store)


def test_a_post_records_the_unsubscribe_once_however_often_it_comes(
    links: OneClick, store: FakeUnsubscribes
) -> None:
    links.unsubscribe(TOKEN)
    links.unsubscribe(TOKEN)

    [entry] = store.entries_by_tenant[TENANT].values()
    assert (entry.address, entry.topic, entry.source) == (
        "ada@example.com",
        "news",
        UnsubscribeSource.ONE_CLICK,
    )
    blocking = links.unsubscribed(TOKEN)[1]
    assert blocking is not None
    assert blocking.topic == "news"


@pytest.mark.parametrize("token", [TOKEN[:-1], TOKEN + "A", "1.e30.e30", "", TOKEN.replace("1.", "2.", 1)])
def test_a_link_that_does_not_verify_is_not_found_and_records_nothing(
    links: OneClick, store: FakeUnsubscribes, token: str
) -> None:
    with pytest.raises(HeraldError) as refused:
        links.unsubscribe(token)

    assert (refused.value.code, str(refused.value)) == (
        ErrorCode.NOT_FOUND,
        "This unsubscribe link is not valid.",
    )
    assert store.entries_by_tenant == {}


def test_a_resubscribe_takes_back_the_links_topic_but_not_a_providers_every_topic_entry(
    links: OneClick, store: FakeUnsubscribes
) -> None:
    provider = Unsubscribe(
        "ada@example.com", ALL_TOPICS, "2026-12-04T00:00:00.000Z", UnsubscribeSource.PROVIDER, "MAILGUN"
    )
    store.record(TENANT, provider)
    links.unsubscribe(TOKEN)

    links.resubscribe(TOKEN)

    assert list(store.entries_by_tenant[TENANT]) == [(ALL_TOPICS, "ada@example.com")]
    assert store.audit == []


def test_the_tenants_removal_is_audited_and_a_second_one_is_not_found(
    links: OneClick, store: FakeUnsubscribes
) -> None:
    links.unsubscribe(TOKEN)
    desk = UnsubscribeList(store)

    desk.remove(CALLER, "ADA@example.com", "news")
    with pytest.raises(HeraldError) as again:
        desk.remove(CALLER, "ada@example.com", "news")

    [audit] = store.audit
    assert (audit.action, audit.target, dict(audit.details)) == (
        AuditAction.UNSUBSCRIBE_REMOVED,
        "ADA@example.com",
        {"topic": "news"},
    )
    assert audit.actor == CALLER.actor
    assert again.value.code is ErrorCode.UNSUBSCRIBE_NOT_FOUND


def test_a_cursor_the_store_refuses_is_invalid_cursor() -> None:
    class Refusing(FakeUnsubscribes):
        def page(
            self, tenant_id: str, *, topic: str | None, address: str | None, limit: int, cursor: str | None
        ) -> UnsubscribePage:
            raise ValueError("not a cursor")

    with pytest.raises(HeraldError) as refused:
        UnsubscribeList(Refusing()).page(CALLER, topic=None, address=None, limit=10, cursor="x")

    assert refused.value.code is ErrorCode.INVALID_CURSOR
