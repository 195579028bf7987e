"""The headers an attempt keeps and shows: Herald's own as sent with signatures masked, the tenant's
by name only (their values stay sealed with the request) and shown from the request, masked where
they are credentials; an answer's headers bounded."""

from __future__ import annotations

from herald.domain.notifications import WebhookNotification
from herald.domain.webhooks import kept_request_headers, kept_response_headers, shown_request_headers

SENT = {
    "Authorization": "Bearer tok-1",
    "X-Team": "blue",
    "Host": "hooks.example.com",
    "webhook-id": "job-1",
    "webhook-timestamp": "1796412536",
    "webhook-signature": "v1,c2lnbmF0dXJl",
    "X-Webhook-Signature": "t=1796412536,v1=abcdef",
}


def test_the_kept_headers_hold_no_secret_and_no_tenant_value() -> None:
    kept = kept_request_headers(SENT, frozenset({"Authorization", "X-Team"}))

    assert kept == {
        "Authorization": "[redacted]",
        "X-Team": "[redacted]",
        "Host": "hooks.example.com",
        "webhook-id": "job-1",
        "webhook-timestamp": "1796412536",
        "webhook-signature": "[masked]",
        "X-Webhook-Signature": "[masked]",
    }


def test_the_shown_headers_take_the_tenants_values_from_its_request_masked_where_credentials() -> None:
    hook = WebhookNotification(
        "https://hooks.example.com/in", {}, headers={"Authorization": "Bearer tok-1", "X-Team": "blue"}
    )
    kept = kept_request_headers(SENT, frozenset(hook.header_names()))

    shown = shown_request_headers(kept, hook.shown_headers())

    assert (shown["Authorization"], shown["X-Team"], shown["X-Webhook-Signature"]) == (
        "[masked]",
        "blue",
        "[masked]",
    )
    assert "tok-1" not in str(shown)


def test_an_answers_headers_are_bounded_and_cookies_masked() -> None:
    received = [("Set-Cookie", "session=abc"), ("X-Api-Token", "t"), ("X-Long", "v" * 1000)] + [
        (f"X-{n}", "v") for n in range(40)
    ]

    kept = kept_response_headers(received)

    assert len(kept) == 20
    assert (kept["Set-Cookie"], kept["X-Api-Token"], len(kept["X-Long"])) == ("[masked]", "[masked]", 256)
