"""Checkout creation at Polar (``POST /v1/checkouts/``) and Paystack (``POST
/transaction/initialize``), and their customer portals (Polar: a customer session's
``customer_portal_url``, ``POST /v1/customer-sessions/``; Paystack: a subscription's manage link,
``GET /subscription/<code>/manage/link``), each with its platform credential from SSM, connect and read timeouts,
and no redirects followed. A refusal or a network failure is a ``DependencyError`` naming the
processor and its status, never the credential.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import requests

from herald import USER_AGENT
from herald.adapters.inbound.paystack import TENANT_ID_METADATA
from herald.adapters.providers.transport import TIMEOUT, new_session
from herald.domain.errors import DependencyError
from herald.domain.providers import TENANT_ID_TAG
from herald.services.checkout import CheckoutRequest, PortalRequest

_session = new_session()


def _post(what: str, url: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    return _answer(what, "POST", url, token, body)


def _answer(
    what: str, method: str, url: str, token: str, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json", "User-Agent": USER_AGENT}
    try:
        answer = _session.request(
            method, url, json=body, headers=headers, timeout=TIMEOUT, allow_redirects=False
        )
    except requests.RequestException as exc:
        raise DependencyError(f"{what} failed: {type(exc).__name__}") from exc
    if not 200 <= answer.status_code < 300:
        raise DependencyError(f"{what} failed: HTTP {answer.status_code}")
    try:
        document = answer.json()
    except ValueError as exc:
        raise DependencyError(f"{what} failed: the answer is not JSON") from exc
    if not isinstance(document, dict):
        raise DependencyError(f"{what} failed: unexpected answer")
    return document


def _url(url: object, what: str) -> str:
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise DependencyError(f"{what} failed: the answer has no URL")
    return url


class PolarCheckout:
    def __init__(self, base_url: str, token: Callable[[], str]) -> None:
        self._base_url = base_url.rstrip("/")
        self._token = token

    def create(self, request: CheckoutRequest) -> str:
        document = _post(
            "Polar checkout",
            f"{self._base_url}/v1/checkouts/",
            self._token(),
            {
                "products": [request.plan_key],
                "success_url": request.success_url,
                "return_url": request.cancel_url,
                "customer_email": request.email,
                # Both: Polar may reuse an existing customer of that email without the external id.
                "external_customer_id": request.tenant_id,
                "metadata": {TENANT_ID_TAG: request.tenant_id},
            },
        )
        return _url(document.get("url"), "Polar checkout")

    def portal(self, request: PortalRequest) -> str:
        # Polar finds the customer by the external id every checkout gave it (the tenant id).
        document = _post(
            "Polar customer portal",
            f"{self._base_url}/v1/customer-sessions/",
            self._token(),
            {"external_customer_id": request.tenant_id},
        )
        return _url(document.get("customer_portal_url"), "Polar customer portal")


class PaystackCheckout:
    def __init__(self, base_url: str, secret_key: Callable[[], str]) -> None:
        self._base_url = base_url.rstrip("/")
        self._secret_key = secret_key

    def create(self, request: CheckoutRequest) -> str:
        key = self._secret_key()
        # The plan sets the amount, but initialize still requires one: the plan's own.
        plan = _answer("Paystack plan", "GET", f"{self._base_url}/plan/{request.plan_key}", key)
        amount = (plan.get("data") or {}).get("amount")
        if not isinstance(amount, int):
            raise DependencyError("Paystack plan failed: the plan has no amount")
        document = _post(
            "Paystack checkout",
            f"{self._base_url}/transaction/initialize",
            key,
            {
                "email": request.email,
                "amount": amount,
                "plan": request.plan_key,
                "callback_url": request.success_url,
                "metadata": {TENANT_ID_METADATA: request.tenant_id, "cancel_action": request.cancel_url},
            },
        )
        return _url((document.get("data") or {}).get("authorization_url"), "Paystack checkout")

    def portal(self, request: PortalRequest) -> str:
        if not request.subscription_ref:
            raise DependencyError("Paystack customer portal failed: no subscription code is known yet")
        document = _answer(
            "Paystack customer portal",
            "GET",
            f"{self._base_url}/subscription/{quote(request.subscription_ref, safe='')}/manage/link",
            self._secret_key(),
        )
        return _url((document.get("data") or {}).get("link"), "Paystack customer portal")
