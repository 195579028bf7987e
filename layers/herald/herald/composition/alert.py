"""Composition root of the AlertFunction: the relay from the alert topic to Slack."""

from __future__ import annotations

from herald.adapters.queueing import SqsQueueDepths
from herald.adapters.slack import ParameterSecret, SlackWebhook
from herald.composition.common import foundation, once
from herald.services.alerting import AlertRelay
from herald.settings import AlertSettings


def _alert_relay() -> AlertRelay:
    base = foundation()
    settings = base.settings
    webhook_url = ParameterSecret(AlertSettings.from_env().slack_webhook_parameter, base.clients.ssm)
    slack = SlackWebhook(webhook_url, local_origin=settings.local_webhook_origin)
    return AlertRelay(slack, SqsQueueDepths(base.clients.sqs), settings.queues_by_name())


def alert_relay() -> AlertRelay:
    return once(_alert_relay)
