"""What Herald tells its operators, and how it reaches them: the notices published to the alert topic
(CloudWatch alarm state changes, dead-lettered jobs, the pause of job alerts during an outage,
refused payments) and the window that rate-limits job alerts.

Herald's own alerts travel as JSON messages whose ``type`` says what they are; CloudWatch's own
alarm notifications are JSON with ``AlarmName``; anything else on the topic is a plain notice.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any
from urllib.parse import quote

import msgspec

from herald.domain.billing import PaymentRefused
from herald.domain.clock import epoch_seconds, iso
from herald.domain.inbound import SubscriptionEvent
from herald.domain.job_records import JobMessage

JOB_DEAD_LETTERED = "herald.job-dead-lettered"
JOB_ALERTS_PAUSED = "herald.job-alerts-paused"
PAYMENT_REFUSED = "herald.payment-refused"
# Each window lets this many job alerts through, then one notice that they are paused until it ends:
# an outage that dead-letters thousands of jobs sends a handful of messages, not thousands.
JOB_ALERTS_PER_WINDOW = 5
ALERT_WINDOW = timedelta(minutes=10)
# Long enough for what an operator reads in a chat message; the DLQ copy keeps the whole error.
MAX_ERROR_CHARS = 500


class JobAlert(msgspec.Struct, frozen=True):
    """One job an operator can act on just went to the dead-letter queue."""

    job_id: str
    tenant_id: str
    channel: str
    priority: int
    attempts: int
    error: str

    @classmethod
    def of(cls, message: JobMessage, attempts: int, error: str) -> JobAlert:
        return cls(
            message.job_id, message.tenant_id, message.channel.value, message.priority, attempts, error
        )

    @property
    def subject(self) -> str:
        return f"Herald: job {self.job_id} dead-lettered"

    def to_message(self) -> dict[str, Any]:
        return {
            "type": JOB_DEAD_LETTERED,
            "jobId": self.job_id,
            "tenantId": self.tenant_id,
            "channel": self.channel,
            "priority": self.priority,
            "attempts": self.attempts,
            "error": self.error[:MAX_ERROR_CHARS],
        }


class AlertWindow(msgspec.Struct, frozen=True):
    start: datetime

    @property
    def end(self) -> datetime:
        return self.start + ALERT_WINDOW

    @property
    def key(self) -> str:
        return iso(self.start)

    @property
    def expires_at(self) -> int:
        """When its counter may go (a day after it ends)."""
        return epoch_seconds(self.end + timedelta(days=1))


def alert_window(now: datetime) -> AlertWindow:
    seconds = int(ALERT_WINDOW.total_seconds())
    return AlertWindow(datetime.fromtimestamp(epoch_seconds(now) // seconds * seconds, tz=now.tzinfo))


class JobAlertsPaused(msgspec.Struct, frozen=True):
    """More jobs than ``limit`` were dead-lettered in the window; their alerts are held until its end."""

    since: str
    until: str
    limit: int

    @property
    def subject(self) -> str:
        return "Herald: job alerts paused"

    def to_message(self) -> dict[str, Any]:
        return {"type": JOB_ALERTS_PAUSED, "since": self.since, "until": self.until, "limit": self.limit}

    @classmethod
    def of(cls, window: AlertWindow, limit: int) -> JobAlertsPaused:
        return cls(iso(window.start), iso(window.end), limit)


class PaymentAlert(msgspec.Struct, frozen=True):
    """A verified payment did not move the tenant's plan: it is not shown to pay the plan's price.
    Only ids, names and amounts: never a signature, a secret or the event's body."""

    processor: str
    event: str  # the processor's name of the event
    event_id: str
    tenant_id: str
    plan: str
    reason: str

    @classmethod
    def of(cls, event: SubscriptionEvent, tenant_id: str, refused: PaymentRefused) -> PaymentAlert:
        return cls(
            event.processor.value,
            event.event_name,
            event.event_id,
            tenant_id,
            refused.plan.value,
            refused.reason,
        )

    @property
    def subject(self) -> str:
        return f"Herald: a {self.processor.title()} payment was refused"

    def to_message(self) -> dict[str, Any]:
        return {
            "type": PAYMENT_REFUSED,
            "processor": self.processor,
            "event": self.event,
            "eventId": self.event_id,
            "tenantId": self.tenant_id,
            "plan": self.plan,
            "reason": self.reason,
        }


class AlarmChange(msgspec.Struct, frozen=True):
    """A CloudWatch alarm changed state (CloudWatch's notification to its SNS actions)."""

    name: str
    description: str
    old_state: str
    new_state: str
    reason: str
    changed_at: str
    arn: str
    namespace: str
    metric: str
    dimensions: tuple[tuple[str, str], ...]

    @property
    def region(self) -> str:
        parts = self.arn.split(":")
        return parts[3] if len(parts) > 3 else ""

    @property
    def console_url(self) -> str:
        region = self.region
        return (
            f"https://{region}.console.aws.amazon.com/cloudwatch/home?region={region}"
            f"#alarmsV2:alarm/{quote(self.name, safe='')}"
        )

    @property
    def is_news(self) -> bool:
        """False for a new alarm's first evaluation coming out OK: nothing went wrong or came back."""
        return not (self.new_state == "OK" and self.old_state == "INSUFFICIENT_DATA")

    @property
    def queue_name(self) -> str | None:
        """The queue an AWS/SQS alarm watches."""
        return dict(self.dimensions).get("QueueName") if self.namespace == "AWS/SQS" else None

    @classmethod
    def from_notification(cls, body: dict[str, Any]) -> AlarmChange:
        trigger = body.get("Trigger") or {}
        dimensions = tuple(
            (str(item.get("name", "")), str(item.get("value", "")))
            for item in trigger.get("Dimensions") or []
        )
        return cls(
            name=str(body["AlarmName"]),
            description=str(body.get("AlarmDescription") or ""),
            old_state=str(body.get("OldStateValue") or ""),
            new_state=str(body.get("NewStateValue") or ""),
            reason=str(body.get("NewStateReason") or ""),
            changed_at=str(body.get("StateChangeTime") or ""),
            arn=str(body.get("AlarmArn") or ""),
            namespace=str(trigger.get("Namespace") or ""),
            metric=str(trigger.get("MetricName") or ""),
            dimensions=dimensions,
        )


class PlainNotice(msgspec.Struct, frozen=True):
    """Anything else published to the alert topic (an operator's test message, say)."""

    subject: str
    text: str


Notice = AlarmChange | JobAlert | JobAlertsPaused | PaymentAlert | PlainNotice


class ChatOutcome(StrEnum):
    POSTED = "posted"
    # No chat webhook is configured: the alert is logged, nothing else.
    NOT_CONFIGURED = "not-configured"
    # The chat refused the message or the webhook (revoked, malformed): retrying cannot help.
    REFUSED = "refused"
    # Not worth a message (an alarm settling into OK after it was created).
    SKIPPED = "skipped"


def _job_alert(body: dict[str, Any]) -> JobAlert:
    return JobAlert(
        job_id=str(body["jobId"]),
        tenant_id=str(body["tenantId"]),
        channel=str(body["channel"]),
        priority=int(body["priority"]),
        attempts=int(body["attempts"]),
        error=str(body["error"]),
    )


def _payment_alert(body: dict[str, Any]) -> PaymentAlert:
    return PaymentAlert(
        processor=str(body["processor"]),
        event=str(body["event"]),
        event_id=str(body["eventId"]),
        tenant_id=str(body["tenantId"]),
        plan=str(body["plan"]),
        reason=str(body["reason"]),
    )


def read_notice(subject: str | None, message: str) -> Notice:
    """What a message of the alert topic says; one this module cannot read is a plain notice."""
    try:
        body = json.loads(message)
        if isinstance(body, dict):
            if "AlarmName" in body:
                return AlarmChange.from_notification(body)
            if body.get("type") == JOB_DEAD_LETTERED:
                return _job_alert(body)
            if body.get("type") == JOB_ALERTS_PAUSED:
                return JobAlertsPaused(str(body["since"]), str(body["until"]), int(body["limit"]))
            if body.get("type") == PAYMENT_REFUSED:
                return _payment_alert(body)
    except (ValueError, KeyError, TypeError):
        pass
    return PlainNotice(subject or "Herald notice", message)
