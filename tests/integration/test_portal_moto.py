"""The portal against moto, through the real handlers and the real table: a link on the stack's own
origin (never the request's Host), stored as its hash with its audit entry in one transaction,
opened once for a cookie the portal's routes alone take; the cookie reaches nothing else of the
account; the page is served under the console's rules."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer

from herald_harness.dns import resolve_publicly
from herald_harness.in_moto import ApiAnswer, HeraldInMoto, client, herald_in_moto

FORGED_HOST = {"host": "evil.example", "x-forwarded-proto": "http"}
SPENT = "This portal link has expired or was already used; ask for a new one."
ENDED = "The portal session has ended; open a new portal link."
ENDPOINT = {"url": "https://hooks.example.com/cust-1", "eventTypes": ["order.paid"]}


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    resolve_publicly(monkeypatch)  # no DNS here: the endpoints' hosts resolve publicly
    with herald_in_moto(monkeypatch) as running:
        yield running


def event_types(herald: HeraldInMoto, key: str, *names: str) -> None:
    """The account's catalog, made through the event type routes."""
    for name in names:
        made = herald.api(
            "POST", "/api/v1/event-types", {"name": name, "description": f"About {name}"}, key=key
        )
        assert made.status == 201, made.text


def items(herald: HeraldInMoto, prefix: str) -> list[dict[str, Any]]:
    raw = client("dynamodb").scan(TableName=herald.topology.outputs["TableName"])["Items"]
    found = [{name: TypeDeserializer().deserialize(value) for name, value in item.items()} for item in raw]
    return [item for item in found if str(item["pk"]).startswith(prefix)]


def new_link(herald: HeraldInMoto, key: str, subscriber_id: str | None = "cust_1", ttl: int = 3600) -> str:
    body: dict[str, Any] = {"ttlSeconds": ttl}
    if subscriber_id is not None:
        body["subscriberId"] = subscriber_id
    answer = herald.api("POST", "/api/v1/portal-links", body, key=key, headers=FORGED_HOST)
    assert answer.status == 201, answer.text
    url: str = answer.data["url"]
    return url


def token_of(url: str) -> str:
    return url.split("#", 1)[1]


def open_link(herald: HeraldInMoto, token: str, headers: dict[str, str] | None = None) -> ApiAnswer:
    proof = {"origin": herald.origin} if headers is None else headers
    return herald.api("POST", "/api/v1/portal/session", {"token": token}, headers=proof)


def portal_cookie(answer: ApiAnswer) -> str:
    cookie = next(value for value in answer.cookies if value.startswith("herald_portal="))
    return cookie.split(";", 1)[0]


def test_a_link_is_on_the_stacks_origin_stored_as_its_hash_with_its_audit_entry(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    url = new_link(herald, key)
    assert url.startswith(f"{herald.origin}/portal#")
    assert "evil.example" not in url
    token = token_of(url)
    (link,) = items(herald, "PORTAL#")
    assert (link["pk"], link["sk"]) == (f"PORTAL#{hashlib.sha256(token.encode()).hexdigest()}", "LINK")
    assert (link["tenantId"], link["subscriberId"]) == (tenant_id, "cust_1")
    assert token not in str(link)
    (entry,) = [
        item for item in items(herald, f"AUDIT#{tenant_id}") if item["action"] == "portal_link.created"
    ]
    assert (entry["target"], entry["actorKind"]) == ("cust_1", "key")
    assert token not in str(entry)


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ({"ttlSeconds": 59}, "ttlSeconds: Input should be greater than or equal to 60"),
        ({"ttlSeconds": 604801}, "ttlSeconds: Input should be less than or equal to 604800"),
        ({}, "ttlSeconds"),
        (
            {"ttlSeconds": 60, "subscriberId": "a b"},
            "subscriberId: is not written in the form this field takes.",
        ),
    ],
)
def test_a_link_request_out_of_bounds_is_refused_naming_the_field(
    herald: HeraldInMoto, body: dict[str, Any], sentence: str
) -> None:
    answer = herald.api("POST", "/api/v1/portal-links", body, key=herald.new_key())
    assert (answer.status, answer.body["code"]) == (400, "validation_error")
    assert sentence in answer.body["error"]


def test_a_key_without_the_webhooks_ability_cannot_make_a_link(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    made = herald.api("POST", "/api/v1/account/keys", {"name": "sender", "scopes": ["send"]}, key=key)
    answer = herald.api("POST", "/api/v1/portal-links", {"ttlSeconds": 60}, key=made.data["key"])
    assert (answer.status, answer.body["code"]) == (403, "insufficient_scope")
    assert "manage" in answer.body["error"]


def test_a_link_opens_once_for_an_http_only_strict_cookie_scoped_to_the_portals_routes(
    herald: HeraldInMoto,
) -> None:
    token = token_of(new_link(herald, herald.new_key()))
    opened = open_link(herald, token)
    assert opened.status == 200, opened.text
    assert opened.data["subscriberId"] == "cust_1"
    (cookie,) = opened.cookies
    assert cookie.startswith("herald_portal=")
    for attribute in ("HttpOnly", "Secure", "SameSite=Strict", "Path=/api/v1/portal", "Max-Age=7200"):
        assert attribute in cookie
    again = open_link(herald, token)
    assert (again.status, again.body["code"], again.body["error"]) == (401, "portal_link_invalid", SPENT)
    assert [item["sk"] for item in items(herald, "PORTAL#")] == ["SESSION"]


def test_a_link_is_opened_only_from_the_portals_own_page(herald: HeraldInMoto) -> None:
    token = token_of(new_link(herald, herald.new_key()))
    forged = open_link(herald, token, {"origin": "https://evil.example"})
    assert (forged.status, forged.body["code"]) == (403, "cross_origin_request")
    # The refused attempt did not use the link up.
    assert open_link(herald, token).status == 200


def test_the_portal_cookie_reaches_no_other_route(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    cookie = portal_cookie(open_link(herald, token_of(new_link(herald, key))))
    proof = {"cookie": cookie, "origin": herald.origin}
    for method, path in [
        ("GET", "/api/v1/account/keys"),
        ("GET", "/api/v1/notifications/jobs"),
        ("GET", "/api/v1/account"),
        ("GET", "/api/v1/account/audit"),
        ("POST", "/api/v1/portal-links"),
    ]:
        answer = herald.api(method, path, {"ttlSeconds": 60} if method == "POST" else None, headers=proof)
        assert (answer.status, answer.body["code"]) == (401, "missing_api_key"), path
        assert answer.body["error"] == "An API key is required (X-API-Key header)."
    # Nor is a console session cookie of that name's value taken as one.
    forged = herald.api(
        "GET", "/api/v1/account", headers={"cookie": cookie.replace("herald_portal", "herald_session")}
    )
    assert (forged.status, forged.body["code"]) == (401, "invalid_session")


def test_the_portals_routes_take_nothing_but_the_portal_cookie(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    by_key = herald.api("GET", "/api/v1/portal/event-types", key=key)
    assert (by_key.status, by_key.body["code"], by_key.body["error"]) == (401, "invalid_session", ENDED)
    forged = herald.api("GET", "/api/v1/portal/event-types", headers={"cookie": "herald_portal=" + "A" * 43})
    assert (forged.status, forged.body["error"]) == (401, ENDED)
    # A link's own token is not a session.
    token = token_of(new_link(herald, key))
    as_session = herald.api("GET", "/api/v1/portal/event-types", headers={"cookie": f"herald_portal={token}"})
    assert as_session.status == 401


def test_signing_out_ends_the_portal_session(herald: HeraldInMoto) -> None:
    cookie = portal_cookie(open_link(herald, token_of(new_link(herald, herald.new_key()))))
    assert herald.api("GET", "/api/v1/portal/event-types", headers={"cookie": cookie}).status == 200
    out = herald.api("DELETE", "/api/v1/portal/session", headers={"cookie": cookie, "origin": herald.origin})
    assert out.status == 200
    assert "Max-Age=0" in out.cookies[0] or "Max-Age=-1" in out.cookies[0]
    assert herald.api("GET", "/api/v1/portal/event-types", headers={"cookie": cookie}).status == 401


def test_the_portal_page_is_served_with_the_consoles_security_headers(herald: HeraldInMoto) -> None:
    page = herald.api("GET", "/portal", content_type=None)
    assert page.status == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert '<script type="module" src="/console/assets/portal.js"></script>' in page.text


def portal_of(herald: HeraldInMoto, key: str, subscriber_id: str | None = "cust_1") -> dict[str, str]:
    """The headers of the customer's browser: its portal cookie, from the stack's own origin."""
    cookie = portal_cookie(open_link(herald, token_of(new_link(herald, key, subscriber_id))))
    return {"cookie": cookie, "origin": herald.origin}


def subscribe(herald: HeraldInMoto, key: str, url: str, subscriber_id: str | None) -> str:
    body: dict[str, Any] = {"url": url, "eventTypes": ["order.paid"]}
    if subscriber_id is not None:
        body["subscriberId"] = subscriber_id
    answer = herald.api("POST", "/api/v1/subscriptions", body, key=key)
    assert answer.status == 201, answer.text
    subscription_id: str = answer.data["id"]
    return subscription_id


def test_a_customer_adds_its_own_endpoint_and_sees_only_its_own(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    event_types(herald, key, "order.paid", "order.refunded")
    theirs = subscribe(herald, key, "https://hooks.example.com/cust-2", "cust_2")
    subscribe(herald, key, "https://hooks.example.com/unowned", None)
    browser = portal_of(herald, key)

    catalog = herald.api("GET", "/api/v1/portal/event-types", headers=browser).data
    assert [(entry["name"], entry["description"]) for entry in catalog] == [
        ("order.paid", "About order.paid"),
        ("order.refunded", "About order.refunded"),
    ]
    # The body names another subscriber: the subscription is the session's all the same.
    added = herald.api(
        "POST", "/api/v1/portal/subscriptions", {**ENDPOINT, "subscriberId": "cust_2"}, headers=browser
    )
    assert added.status == 201, added.text
    assert added.data["subscriberId"] == "cust_1"
    assert added.data["secret"].startswith("whsec_")
    listed = herald.api("GET", "/api/v1/portal/subscriptions", headers=browser).data
    assert [(item["id"], item["subscriberId"]) for item in listed] == [(added.data["id"], "cust_1")]
    assert "secret" not in listed[0]
    assert theirs not in str(listed)

    # What the customer did is audited as the portal.
    created = [
        item for item in items(herald, f"AUDIT#{tenant_id}") if item["action"] == "subscription.created"
    ]
    assert {(item["actorKind"], item["actorId"]) for item in created} >= {("portal", "cust_1")}


def test_every_portal_route_answers_another_subscribers_subscription_as_unknown(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    event_types(herald, key, "order.paid")
    theirs = subscribe(herald, key, "https://hooks.example.com/cust-2", "cust_2")
    unowned = subscribe(herald, key, "https://hooks.example.com/unowned", None)
    other_key = herald.new_key()
    event_types(herald, other_key, "order.paid")
    elsewhere = subscribe(herald, other_key, "https://hooks.example.com/other-tenant", "cust_1")
    browser = portal_of(herald, key)
    for target in (theirs, unowned, elsewhere):
        base = f"/api/v1/portal/subscriptions/{target}"
        for method, path, body in [
            ("GET", base, None),
            ("PATCH", base, {"description": "mine now"}),
            ("POST", f"{base}/disable", None),
            ("POST", f"{base}/enable", None),
            ("POST", f"{base}/test", {}),
            ("POST", f"{base}/secret/rotate", None),
            ("GET", f"{base}/deliveries", None),
            ("DELETE", base, None),
        ]:
            answer = herald.api(method, path, body, headers=browser)
            assert (answer.status, answer.body["code"]) == (404, "subscription_not_found"), (method, path)
            assert answer.body["error"] == f"There is no subscription {target}."
    # All three still stand, unchanged.
    for target, owner_key in ((theirs, key), (unowned, key), (elsewhere, other_key)):
        kept = herald.api("GET", f"/api/v1/subscriptions/{target}", key=owner_key)
        assert (kept.status, kept.data["state"], kept.data["description"]) == (200, "enabled", None)


def test_a_customer_manages_its_own_endpoint(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    event_types(herald, key, "order.paid")
    browser = portal_of(herald, key)
    added = herald.api("POST", "/api/v1/portal/subscriptions", ENDPOINT, headers=browser).data
    base = f"/api/v1/portal/subscriptions/{added['id']}"
    assert herald.api("POST", f"{base}/disable", headers=browser).data["state"] == "disabled"
    assert herald.api("POST", f"{base}/enable", headers=browser).data["state"] == "enabled"
    rotated = herald.api("POST", f"{base}/secret/rotate", headers=browser).data
    assert rotated["secret"].startswith("whsec_")
    assert rotated["secret"] != added["secret"]
    patched = herald.api("PATCH", base, {"description": "Orders"}, headers=browser).data
    assert patched["description"] == "Orders"
    assert herald.api("GET", f"{base}/deliveries", headers=browser).data["data"] == []
    assert herald.api("DELETE", base, headers=browser).status == 200
    assert herald.api("GET", "/api/v1/portal/subscriptions", headers=browser).data == []


def test_a_link_without_a_subscriber_manages_every_subscription(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    event_types(herald, key, "order.paid")
    ids = {
        subscribe(herald, key, f"https://hooks.example.com/{n}", owner) for n, owner in enumerate(["a", None])
    }
    browser = portal_of(herald, key, None)
    listed = herald.api("GET", "/api/v1/portal/subscriptions", headers=browser).data
    assert {item["id"] for item in listed} == ids


def test_a_portal_change_from_another_origin_or_without_a_session_is_refused(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    event_types(herald, key, "order.paid")
    browser = portal_of(herald, key)
    forged = herald.api(
        "POST",
        "/api/v1/portal/subscriptions",
        ENDPOINT,
        headers={**browser, "origin": "https://evil.example"},
    )
    assert (forged.status, forged.body["code"]) == (403, "cross_origin_request")
    # Who before what: a bad body without a session is a 401, with one a 400 naming the field.
    anonymous = herald.api(
        "POST", "/api/v1/portal/subscriptions", {"url": 5}, headers={"origin": herald.origin}
    )
    assert (anonymous.status, anonymous.body["error"]) == (401, ENDED)
    invalid = herald.api("POST", "/api/v1/portal/subscriptions", {"url": 5}, headers=browser)
    assert invalid.status == 400
    assert "url" in invalid.body["error"]
    assert herald.api("GET", "/api/v1/portal/subscriptions", headers=browser).data == []
