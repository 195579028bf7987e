"""Alerts to operators: job alerts rate-limited per window across containers, and the AlertFunction's
relay of what reaches the alert topic to the chat."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from herald.domain.alerts import (
    ALERT_WINDOW,
    JOB_ALERTS_PER_WINDOW,
    AlarmChange,
    AlertWindow,
    ChatOutcome,
    JobAlert,
    JobAlertsPaused,
    Notice,
    PaymentAlert,
    PlainNotice,
    alert_window,
    read_notice,
)
from herald.domain.errors import DependencyError
from herald.services.alerting import AlertRelay, RateLimitedAlerts
from tests.fakes.queues import FakeTopic

START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
DLQ_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dev-dlq"


def alarm_notification(new: str = "ALARM", old: str = "OK", queue: str = "herald-dev-dlq") -> dict[str, Any]:
    """CloudWatch's notification to an alarm's SNS actions, as it publishes it."""
    return {
        "AlarmName": "herald-dev-dlq-not-empty",
        "AlarmDescription": "A notification sits in the dead-letter queue.",
        "AWSAccountId": "123456789012",
        "NewStateValue": new,
        "NewStateReason": "Threshold Crossed: 1 out of the last 1 datapoints [3.0] was greater than the threshold (0.0).",
        "StateChangeTime": "2026-11-30T12:01:00.000+0000",
        "Region": "US East (N. Virginia)",
        "AlarmArn": "arn:aws:cloudwatch:us-east-1:123456789012:alarm:herald-dev-dlq-not-empty",
        "OldStateValue": old,
        "Trigger": {
            "MetricName": "ApproximateNumberOfMessagesVisible",
            "Namespace": "AWS/SQS",
            "Statistic": "MAXIMUM",
            "Dimensions": [{"value": queue, "name": "QueueName"}],
            "Period": 60,
            "EvaluationPeriods": 1,
            "ComparisonOperator": "GreaterThanThreshold",
            "Threshold": 0.0,
        },
    }


def job_alert(number: int = 1) -> JobAlert:
    return JobAlert(f"job-{number}", "tenant-a", "email", 5, 3, "POSTMARK transient: HTTP 503")


class SharedCounter:
    """The DynamoDB counter every container shares; ``writes`` counts its (billed) updates."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.writes = 0

    def count(self, window: AlertWindow) -> int:
        self.writes += 1
        self.counts[window.key] = self.counts.get(window.key, 0) + 1
        return self.counts[window.key]


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


# ---------------------------------------------------------------- rate limit


def test_an_outage_sends_five_job_alerts_then_one_paused_notice_per_window(clock: Clock) -> None:
    counter, topic = SharedCounter(), FakeTopic()
    alerts = RateLimitedAlerts(counter, topic, clock=clock)

    for number in range(1, 1001):
        alerts.dead_lettered(job_alert(number))

    assert topic.types() == ["herald.job-dead-lettered"] * JOB_ALERTS_PER_WINDOW + [
        "herald.job-alerts-paused"
    ]
    assert [message["jobId"] for _, message in topic.published[:5]] == [f"job-{n}" for n in range(1, 6)]
    subject, paused = topic.published[-1]
    assert subject == "Herald: job alerts paused"
    assert paused == {
        "type": "herald.job-alerts-paused",
        "since": "2026-11-30T12:00:00.000Z",
        "until": "2026-11-30T12:10:00.000Z",
        "limit": JOB_ALERTS_PER_WINDOW,
    }
    # Only failures pay, and once this container knows the window is over its limit, not even they.
    assert counter.writes == JOB_ALERTS_PER_WINDOW + 1


def test_the_limit_holds_across_containers_and_a_new_window_alerts_again(clock: Clock) -> None:
    counter, topic = SharedCounter(), FakeTopic()
    containers = [RateLimitedAlerts(counter, topic, clock=clock) for _ in range(4)]

    for number in range(40):
        containers[number % 4].dead_lettered(job_alert(number))
    clock.now += ALERT_WINDOW
    containers[0].dead_lettered(job_alert(99))

    assert topic.types().count("herald.job-dead-lettered") == JOB_ALERTS_PER_WINDOW + 1
    assert topic.types().count("herald.job-alerts-paused") == 1
    assert topic.published[-1][1]["jobId"] == "job-99"


def test_an_alert_names_the_job_its_tenant_channel_and_a_bounded_error() -> None:
    alert = JobAlert("job-7", "tenant-a", "webhook", 1, 3, "x" * 5000)

    message = alert.to_message()

    assert alert.subject == "Herald: job job-7 dead-lettered"
    assert {key: message[key] for key in ("jobId", "tenantId", "channel", "priority", "attempts")} == {
        "jobId": "job-7",
        "tenantId": "tenant-a",
        "channel": "webhook",
        "priority": 1,
        "attempts": 3,
    }
    assert len(message["error"]) == 500


def test_a_topic_that_cannot_be_reached_is_reported_and_never_fails_the_delivery(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    topic = FakeTopic()
    topic.failure = DependencyError("alert topic unavailable: EndpointConnectionError")
    alerts = RateLimitedAlerts(SharedCounter(), topic, clock=clock)

    alerts.dead_lettered(job_alert())

    assert topic.published == []
    [record] = [record for record in caplog.records if record.getMessage() == "job alert not sent"]
    assert (record.levelname, record.__dict__["job_id"]) == ("ERROR", "job-1")
    assert record.__dict__["reason"] == "alert topic unavailable: EndpointConnectionError"


def test_windows_are_ten_minutes_from_the_hour() -> None:
    window = alert_window(datetime(2026, 11, 30, 12, 17, 59, tzinfo=UTC))
    assert (window.key, window.end) == (
        "2026-11-30T12:10:00.000Z",
        datetime(2026, 11, 30, 12, 20, tzinfo=UTC),
    )
    assert window.expires_at == int((window.end + timedelta(days=1)).timestamp())


# ---------------------------------------------------------------- what the topic carries


def test_every_kind_of_message_on_the_topic_is_read() -> None:
    change = read_notice('ALARM: "herald-dev-dlq-not-empty"', json.dumps(alarm_notification()))
    assert isinstance(change, AlarmChange)
    assert (change.name, change.old_state, change.new_state, change.queue_name) == (
        "herald-dev-dlq-not-empty",
        "OK",
        "ALARM",
        "herald-dev-dlq",
    )
    assert change.console_url == (
        "https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1"
        "#alarmsV2:alarm/herald-dev-dlq-not-empty"
    )
    assert read_notice("x", json.dumps(job_alert().to_message())) == job_alert()
    paused = JobAlertsPaused("2026-11-30T12:00:00.000Z", "2026-11-30T12:10:00.000Z", 5)
    assert read_notice("x", json.dumps(paused.to_message())) == paused
    refused = PaymentAlert("POLAR", "order.paid", "evt-1", "tenant-a", "indie", "paid 100 USD; ...")
    assert read_notice(refused.subject, json.dumps(refused.to_message())) == refused
    assert read_notice("Test", "hello from the console") == PlainNotice("Test", "hello from the console")
    assert read_notice(None, '{"type": "herald.job-dead-lettered"}') == PlainNotice(
        "Herald notice", '{"type": "herald.job-dead-lettered"}'
    )


# ---------------------------------------------------------------- the relay


class Chat:
    def __init__(self, outcome: ChatOutcome = ChatOutcome.POSTED) -> None:
        self.outcome = outcome
        self.posted: list[tuple[Notice, int | None]] = []

    def post(self, notice: Notice, queue_depth: int | None) -> ChatOutcome:
        self.posted.append((notice, queue_depth))
        return self.outcome


class Depths:
    def __init__(self, depth: int | Exception) -> None:
        self.depth = depth
        self.read: list[str] = []

    def visible(self, queue_url: str) -> int:
        self.read.append(queue_url)
        if isinstance(self.depth, Exception):
            raise self.depth
        return self.depth


def test_an_alarm_on_a_queue_is_posted_with_the_queues_depth() -> None:
    chat, depths = Chat(), Depths(3)
    relay = AlertRelay(chat, depths, {"herald-dev-dlq": DLQ_URL})

    outcome = relay.relay("ALARM", json.dumps(alarm_notification()))

    assert outcome is ChatOutcome.POSTED
    [(notice, depth)] = chat.posted
    assert isinstance(notice, AlarmChange)
    assert (notice.new_state, depth) == ("ALARM", 3)
    assert depths.read == [DLQ_URL]


def test_an_unreadable_depth_does_not_hold_the_alarm_back() -> None:
    chat = Chat()
    relay = AlertRelay(
        chat, Depths(DependencyError("queue herald-dev-dlq unavailable")), {"herald-dev-dlq": DLQ_URL}
    )

    assert relay.relay("ALARM", json.dumps(alarm_notification())) is ChatOutcome.POSTED
    assert [depth for _, depth in chat.posted] == [None]


def test_an_alarm_settling_into_ok_at_creation_is_not_posted_but_a_recovery_is() -> None:
    chat = Chat()
    relay = AlertRelay(chat, Depths(0), {})

    settled = relay.relay("OK", json.dumps(alarm_notification(new="OK", old="INSUFFICIENT_DATA")))
    recovered = relay.relay("OK", json.dumps(alarm_notification(new="OK", old="ALARM")))

    assert (settled, recovered) == (ChatOutcome.SKIPPED, ChatOutcome.POSTED)
    assert len(chat.posted) == 1


def test_without_a_chat_webhook_the_alert_is_logged_and_nothing_else_happens(
    caplog: pytest.LogCaptureFixture,
) -> None:
    chat = Chat(ChatOutcome.NOT_CONFIGURED)
    relay = AlertRelay(chat, Depths(0), {})

    outcome = relay.relay("x", json.dumps(job_alert().to_message()))

    assert outcome is ChatOutcome.NOT_CONFIGURED
    [record] = caplog.records
    assert (record.levelname, record.getMessage()) == (
        "WARNING",
        "no chat webhook is configured; alert logged only",
    )
    assert (record.__dict__["job_id"], record.__dict__["tenant_id"]) == ("job-1", "tenant-a")
