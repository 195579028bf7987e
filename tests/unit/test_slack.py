"""The Slack incoming webhook: what a message shows, that foreign text cannot format it or ping a
channel, that the webhook URL (a credential) never leaves in an error, and how the URL is read."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import boto3
import pytest
import requests
import responses
from botocore.stub import Stubber
from msgspec.structs import replace

from herald.adapters.slack import ParameterSecret, SlackWebhook, escaped, slack_message
from herald.domain.alerts import (
    AlarmChange,
    ChatOutcome,
    JobAlert,
    JobAlertsPaused,
    Notice,
    PaymentAlert,
    PlainNotice,
)
from herald.domain.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient

SECRET_PATH = "/services/T000SECRET/B000SECRET/xoxo-the-credential-part"
URL = f"https://hooks.slack.com{SECRET_PATH}"
LOCAL_ORIGIN = "http://127.0.0.1:3100"

ALARM = AlarmChange(
    name="herald-dev-dlq-not-empty",
    description="A notification sits in the dead-letter queue.",
    old_state="OK",
    new_state="ALARM",
    reason="Threshold Crossed: 1 datapoint [2.0] was greater than the threshold (0.0).",
    changed_at="2026-11-30T12:01:00.000+0000",
    arn="arn:aws:cloudwatch:eu-west-1:123456789012:alarm:herald-dev-dlq-not-empty",
    namespace="AWS/SQS",
    metric="ApproximateNumberOfMessagesVisible",
    dimensions=(("QueueName", "herald-dev-dlq"),),
)
REFUSED = PaymentAlert(
    processor="PAYSTACK",
    event="charge.success",
    event_id="sha256:4f1c",
    tenant_id="tenant-a",
    plan="startup",
    reason="paid 100 NGN; the startup plan costs 4500000 NGN",
)


def texts(message: dict[str, Any]) -> str:
    """Every piece of text the message shows, in one string."""
    return json.dumps(message["blocks"], ensure_ascii=False)


def test_an_alarm_message_shows_alarm_state_reason_depth_and_console_link() -> None:
    message = slack_message(ALARM, queue_depth=2)

    assert message["text"] == "ALARM: herald-dev-dlq-not-empty"
    header, description, fields, reason, actions = message["blocks"]
    assert header["text"]["text"] == ":rotating_light: ALARM: herald-dev-dlq-not-empty"
    assert description["text"]["text"] == "A notification sits in the dead-letter queue."
    shown = [field["text"] for field in fields["fields"]]
    assert "*State*\nOK → ALARM" in shown
    assert "*Queue depth*\n2 messages waiting" in shown
    assert reason["text"]["text"].startswith("*Reason*\nThreshold Crossed: 1 datapoint [2.0]")
    [button] = actions["elements"]
    assert button["url"] == (
        "https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1"
        "#alarmsV2:alarm/herald-dev-dlq-not-empty"
    )


def test_a_job_alert_shows_job_tenant_channel_attempts_error_and_the_commands() -> None:
    message = slack_message(JobAlert("job-9", "tenant-a", "email", 1, 3, "SENDGRID transient: HTTP 503"))

    shown = texts(message)
    for part in ("job-9", "tenant-a", "email (priority 1)", "*Attempts*\\n3", "SENDGRID transient: HTTP 503"):
        assert part in shown
    assert "herald dlq redrive --job job-9" in shown


def test_the_paused_notice_says_until_when_and_where_to_look() -> None:
    message = slack_message(JobAlertsPaused("2026-11-30T12:00:00.000Z", "2026-11-30T12:10:00.000Z", 5))

    assert "More than 5 jobs" in message["text"]
    assert "paused until 2026-11-30T12:10:00.000Z" in message["text"]
    assert "herald dlq list" in message["text"]


def test_a_refused_payment_shows_tenant_plan_event_reason_and_how_to_grant_the_plan_by_hand() -> None:
    message = slack_message(REFUSED)

    assert message["text"] == (
        "PAYSTACK payment refused for tenant tenant-a: paid 100 NGN; the startup plan costs 4500000 NGN"
    )
    shown = texts(message)
    for part in ("*Tenant*\\ntenant-a", "*Plan*\\nstartup", "PAYSTACK charge.success", "sha256:4f1c"):
        assert part in shown
    assert "herald tenant set-plan tenant-a startup" in shown


@pytest.mark.parametrize(
    "attack",
    [
        "<!channel> everyone look",
        "<!here|here>",
        "<@U024BE7LH> you",
        "<https://evil.example/steal|Open the alarm in CloudWatch>",
        "*bold* & _italic_ & `code`",
    ],
)
def test_foreign_text_can_neither_mention_nor_link_in_any_message(attack: str) -> None:
    """Errors come from providers and tenants' endpoints; reasons and notices from whoever publishes."""
    notices: list[Notice] = [
        JobAlert("job-1", "tenant-a", "webhook", 5, 3, attack),
        replace(REFUSED, reason=attack),
        replace(ALARM, reason=attack, description=attack),
        PlainNotice("Test", attack),
    ]
    for notice in notices:
        message = slack_message(notice)
        shown = texts(message) + message["text"]
        assert "<!" not in shown
        assert "<@" not in shown
        assert "<https://evil" not in shown
        assert escaped(attack, 3000) in shown


def test_long_text_is_cut_to_what_block_kit_accepts() -> None:
    message = slack_message(PlainNotice("Test", "x" * 10_000))
    assert len(message["blocks"][1]["text"]["text"]) == 3000


# ---------------------------------------------------------------- posting


@responses.activate
def test_a_post_answered_ok_is_posted() -> None:
    responses.post(URL, body="ok")
    outcome = SlackWebhook(lambda: URL).post(ALARM, 1)

    assert outcome is ChatOutcome.POSTED
    [call] = responses.calls
    body = call.request.body
    assert isinstance(body, bytes)
    assert json.loads(body)["text"] == "ALARM: herald-dev-dlq-not-empty"
    assert call.request.headers["Content-Type"] == "application/json"


def test_without_a_url_nothing_is_sent() -> None:
    assert SlackWebhook(lambda: None).post(ALARM, None) is ChatOutcome.NOT_CONFIGURED


@responses.activate
def test_a_url_in_clear_text_is_refused_except_the_local_stacks_sandbox() -> None:
    responses.post(f"{LOCAL_ORIGIN}/slack/services/T/B/x", body="ok")

    assert (
        SlackWebhook(lambda: "http://hooks.slack.com/services/T/B/x").post(ALARM, None) is ChatOutcome.REFUSED
    )
    local = SlackWebhook(lambda: f"{LOCAL_ORIGIN}/slack/services/T/B/x", local_origin=LOCAL_ORIGIN)
    assert local.post(ALARM, None) is ChatOutcome.POSTED
    assert len(responses.calls) == 1


@responses.activate
def test_a_revoked_webhook_is_refused_and_a_failing_slack_is_a_dependency_error() -> None:
    responses.post(URL, status=404, body="no_service")
    assert SlackWebhook(lambda: URL).post(ALARM, None) is ChatOutcome.REFUSED

    responses.replace(responses.POST, URL, status=503, body="")
    with pytest.raises(DependencyError, match="chat webhook answered 503"):
        SlackWebhook(lambda: URL).post(ALARM, None)


@responses.activate
def test_an_unreachable_slack_is_reported_without_the_webhook_url() -> None:
    responses.post(
        URL,
        body=requests.ConnectionError(f"HTTPSConnectionPool: Max retries exceeded with url: {SECRET_PATH}"),
    )

    with pytest.raises(DependencyError) as raised:
        SlackWebhook(lambda: URL).post(ALARM, None)

    assert str(raised.value) == "chat webhook unreachable: ConnectionError"
    assert "SECRET" not in str(raised.value)
    assert "xoxo" not in repr(raised.value)


# ---------------------------------------------------------------- the URL in Parameter Store


def stubbed_ssm() -> tuple[SSMClient, Stubber]:
    client: SSMClient = boto3.client(
        "ssm", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    return client, Stubber(client)


def test_the_url_is_read_decrypted_once_and_cached() -> None:
    ssm, stub = stubbed_ssm()
    stub.add_response(
        "get_parameter",
        {"Parameter": {"Name": "/herald/slack", "Type": "SecureString", "Value": URL}},
        {"Name": "/herald/slack", "WithDecryption": True},
    )
    with stub:
        secret = ParameterSecret("/herald/slack", lambda: ssm)
        assert secret() == secret() == URL
    stub.assert_no_pending_responses()


def test_a_missing_or_empty_parameter_means_no_url_and_other_errors_are_dependency_errors() -> None:
    ssm, stub = stubbed_ssm()
    stub.add_client_error("get_parameter", "ParameterNotFound")
    stub.add_response("get_parameter", {"Parameter": {"Name": "/b", "Value": "  "}})
    stub.add_client_error("get_parameter", "AccessDeniedException")
    with stub:
        assert ParameterSecret("/a", lambda: ssm)() is None
        assert ParameterSecret("/b", lambda: ssm)() is None
        with pytest.raises(DependencyError, match="parameter store unavailable: AccessDeniedException"):
            ParameterSecret("/c", lambda: ssm)()
