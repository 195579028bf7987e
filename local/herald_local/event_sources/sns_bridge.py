"""SNS subscriptions of functions, played through moto.

In moto each Lambda subscription becomes an HTTP subscription to this bridge, so every publish to
the topic (by the alarm player or by a handler) arrives here as SNS's signed notification; the
bridge answers at once and invokes the function asynchronously with the event Lambda receives.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from herald_local.awslambda.functions import FunctionUnavailable, Invocation
from herald_local.cloudformation.topology import SubscriptionSpec
from herald_local.config import LOOPBACK

log = logging.getLogger(__name__)

InvokeFunction = Callable[[str, Any], Invocation]


def sns_event(notification: dict[str, Any], subscription_arn: str) -> dict[str, Any]:
    """The event Lambda sends a subscribed function for one SNS notification."""
    return {
        "Records": [
            {
                "EventSource": "aws:sns",
                "EventVersion": "1.0",
                "EventSubscriptionArn": subscription_arn,
                "Sns": {
                    "Type": notification.get("Type", "Notification"),
                    "MessageId": notification["MessageId"],
                    "TopicArn": notification["TopicArn"],
                    "Subject": notification.get("Subject"),
                    "Message": notification["Message"],
                    "Timestamp": notification["Timestamp"],
                    "SignatureVersion": notification.get("SignatureVersion", "1"),
                    "Signature": notification.get("Signature", ""),
                    "SigningCertUrl": notification.get("SigningCertURL", ""),
                    "UnsubscribeUrl": notification.get("UnsubscribeURL", ""),
                    "MessageAttributes": notification.get("MessageAttributes") or {},
                },
            }
        ]
    }


class SnsBridge:
    def __init__(self) -> None:
        handler = type("SnsBridgeHandler", (_NotificationHandler,), {"bridge": self})
        self._server = ThreadingHTTPServer((LOOPBACK, 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.2,), name="sns-bridge", daemon=True
        )
        self._executor = ThreadPoolExecutor(4, thread_name_prefix="sns")
        self._subscriptions: dict[str, SubscriptionSpec] = {}
        self._invoke: InvokeFunction | None = None
        self._sns: Any = None
        self._arns: dict[str, str] = {}

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self._server.server_address[1]}"

    def start(self) -> None:
        self._thread.start()

    def attach(self, subscriptions: list[SubscriptionSpec], invoke: InvokeFunction, sns: Any) -> None:
        """Starts delivering: ``invoke`` runs a function, ``sns`` (a moto client) names subscriptions."""
        self._subscriptions = {subscription.logical_id: subscription for subscription in subscriptions}
        self._invoke = invoke
        self._sns = sns

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._executor.shutdown(wait=False, cancel_futures=True)

    def deliver(self, logical_id: str, notification: Any) -> bool:
        subscription = self._subscriptions.get(logical_id)
        if subscription is None or self._invoke is None:
            return False
        if (
            not isinstance(notification, dict)
            or not {"MessageId", "TopicArn", "Message"} <= notification.keys()
        ):
            return False
        self._executor.submit(self._invoke_async, subscription, notification)
        return True

    def _invoke_async(self, subscription: SubscriptionSpec, notification: dict[str, Any]) -> None:
        assert self._invoke is not None
        try:
            event = sns_event(notification, self._subscription_arn(subscription))
            invocation = self._invoke(subscription.function, event)
        except FunctionUnavailable as exc:
            log.error("%s: %s", subscription.logical_id, exc)
            return
        except Exception:  # noqa: BLE001 - an executor would swallow it silently
            log.exception("%s: delivering an SNS notification failed", subscription.logical_id)
            return
        if invocation.failed:
            log.error("%s: %s failed on an SNS notification", subscription.logical_id, subscription.function)

    def _subscription_arn(self, subscription: SubscriptionSpec) -> str:
        if subscription.logical_id not in self._arns:
            endpoint = f"{self.url}/{subscription.logical_id}"
            pages = self._sns.get_paginator("list_subscriptions_by_topic").paginate(
                TopicArn=subscription.topic_arn
            )
            for candidate in (item for page in pages for item in page["Subscriptions"]):
                if candidate["Endpoint"] == endpoint:
                    self._arns[subscription.logical_id] = str(candidate["SubscriptionArn"])
        return self._arns[subscription.logical_id]


class _NotificationHandler(BaseHTTPRequestHandler):
    # Headers and body leave in two writes; with Nagle on, the peer's delayed ACK holds the body ~40 ms.
    disable_nagle_algorithm = True
    bridge: SnsBridge

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's name
        """Deliveries are visible in the function's own log lines."""

    def do_POST(self) -> None:  # noqa: N802 - BaseHTTPRequestHandler's naming
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            delivered = self.bridge.deliver(self.path.strip("/"), json.loads(body))
        except json.JSONDecodeError:
            delivered = False
        self.send_response(200 if delivered else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()
