"""Operations against moto resources built from template.yaml, with the real handlers in this
process: a dead-lettered job's alert reaching Slack through the alert topic and AlertFunction, the
sweeper picking up jobs that lost their message, and the operator CLI's dead-letter and job commands."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from herald.adapters.queueing import decode_message
from herald.adapters.store.counter_store import DynamoCounters
from herald.adapters.store.delivery_store import DynamoDeliveryStore
from herald.adapters.store.job_store import DynamoJobStore
from herald.adapters.store.sweep_store import DynamoSweepStore
from herald.composition.common import foundation
from herald.domain.clock import iso
from herald.domain.job_records import DeliveryLog, JobMessage, NewJob
from herald.domain.jobs import Channel, JobStatus
from herald.domain.notifications import EmailNotification, NotificationRequest
from herald.domain.sweeping import checkpoints
from herald_cli.main import main as herald_cli
from herald_harness.in_moto import HeraldInMoto, client, herald_in_moto
from herald_local.cloudformation.parameters import LOCAL_SLACK_PARAMETER
from herald_local.cloudformation.template import load_template
from herald_local.config import STACK_NAME, project_root
from herald_local.sandbox import SandboxServer

EVENTS = project_root() / "events"
EMAIL_QUEUE = "EmailNormalQueueUrl"
DLQ = "DeadLetterQueueUrl"
ORDERED_QUEUE = "EmailOrderedQueueUrl"
ORDERED_DLQ = "OrderedDeadLetterQueueUrl"
WAIT_SECONDS = 20.0


def wait_for(probe: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if result := probe():
            return result
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def sample(path: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / path).read_text())
    return event


@dataclass
class Ops:
    herald: HeraldInMoto
    sandbox: SandboxServer

    def environment(self, **extra: str) -> dict[str, str]:
        """On top of each function's template environment: one attempt per job, the sandbox as
        providers and as the one loopback origin (its Slack)."""
        urls = {f"HERALD_{name}_BASE_URL": self.sandbox.provider_base_url(name) for name in ("SENDGRID",)}
        return {
            "HERALD_AWS_MAX_ATTEMPTS": "1",
            "HERALD_MAX_ATTEMPTS": "1",
            "HERALD_LOCAL_WEBHOOK_ORIGIN": self.sandbox.base_url,
            **urls,
            **extra,
        }

    def tenant(self) -> tuple[str, str]:
        self.herald.use_function_environment("ApiFunction", self.environment())
        issued = self.herald.new_tenant("startup", providers=())
        answer = self.herald.api(
            "PUT",
            "/api/v1/account/providers/SENDGRID",
            {"apiKey": f"sandbox-{uuid.uuid4().hex}"},
            key=issued.api_key,
        )
        assert answer.status == 201, answer.body
        return issued.tenant_id, issued.api_key

    def send(self, key: str, to: str) -> str:
        self.herald.use_function_environment("ApiFunction", self.environment())
        answer = self.herald.api(
            "POST", "/api/v1/notifications/email", {"to": to, "subject": "Hi", "body": "<p>Hi</p>"}, key=key
        )
        assert answer.status == 202, answer.body
        return str(answer.data["jobId"])

    def deliver_waiting(self) -> None:
        records = self.herald.receive_records(EMAIL_QUEUE)
        self.herald.invoke_worker(EMAIL_QUEUE, records, environment=self.environment())

    def dead_lettered_job(self) -> tuple[str, str]:
        """(tenant, job) of a job that failed its only attempt on a provider answering 500."""
        tenant_id, key = self.tenant()
        job_id = self.send(key, f"fail-500+{uuid.uuid4().hex}@example.com")
        self.deliver_waiting()
        return tenant_id, job_id

    def invoke(self, function: str, event: dict[str, Any], **extra: str) -> Any:
        self.herald.use_function_environment(function, self.environment(**extra))
        return self.herald.invoke(function, event)

    def dlq_bodies(self) -> list[dict[str, Any]]:
        return [json.loads(message["Body"]) for message in self.herald.queued(DLQ)]


@pytest.fixture(scope="module")
def ops() -> Iterator[Ops]:
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        SandboxServer() as sandbox,
        herald_in_moto(monkeypatch) as herald,
    ):
        yield Ops(herald, sandbox)


@pytest.fixture(autouse=True)
def _fresh(ops: Ops) -> None:
    ops.herald.drain_queues()
    ops.sandbox.store.reset()
    client("ssm").put_parameter(
        Name=LOCAL_SLACK_PARAMETER, Value=ops.sandbox.slack_webhook_url, Type="SecureString", Overwrite=True
    )


# ---------------------------------------------------------------- alerts


def test_a_dead_lettered_job_reaches_slack_through_the_alert_topic(ops: Ops) -> None:
    """Given a job whose only attempt fails, When the worker gives up, Then its copy is in the DLQ,
    one alert is published to the alert topic, and AlertFunction posts it to Slack."""
    tenant_id, job_id = ops.dead_lettered_job()

    assert [body["jobId"] for body in ops.dlq_bodies()] == [job_id]
    event = wait_for(
        lambda: next(
            (e for e in ops.herald.sns.of("AlertFunction") if job_id in e["Records"][0]["Sns"]["Message"]),
            None,
        ),
        "the job alert on the topic",
    )
    answer = ops.invoke("AlertFunction", event)

    assert answer == {"outcomes": ["posted"]}
    [message] = ops.sandbox.store.slack_messages()
    assert message.text.startswith(f"Job {job_id} dead-lettered")
    shown = json.dumps(message.blocks)
    assert tenant_id in shown
    assert "herald dlq redrive --job" in shown


def test_the_sample_alarm_event_is_posted_with_the_dead_letter_queues_depth(ops: Ops) -> None:
    client("sqs").send_message(
        QueueUrl=ops.herald.queue_url(DLQ), MessageBody='{"jobId": "j", "tenantId": "t"}'
    )
    event = sample("alert/dlq-alarm.json")
    alarm = json.loads(event["Records"][0]["Sns"]["Message"])
    # The sample names the dev stage's queue; this stack is the local stage's.
    alarm["Trigger"]["Dimensions"] = [
        {"name": "QueueName", "value": ops.herald.queue_url(DLQ).rsplit("/", 1)[1]}
    ]
    event["Records"][0]["Sns"]["Message"] = json.dumps(alarm)

    assert ops.invoke("AlertFunction", event) == {"outcomes": ["posted"]}
    [message] = ops.sandbox.store.slack_messages()
    assert "*Queue depth*\\n1 message waiting" in json.dumps(message.blocks)


def test_without_the_slack_parameter_an_alert_is_only_logged(ops: Ops) -> None:
    client("ssm").delete_parameter(Name=LOCAL_SLACK_PARAMETER)

    assert ops.invoke("AlertFunction", sample("alert/job-dead-lettered.json")) == {
        "outcomes": ["not-configured"]
    }
    assert ops.sandbox.store.slack_messages() == []


# ---------------------------------------------------------------- the sweeper


def stored_without_message(tenant_id: str, created: datetime) -> str:
    """A job the API accepted (its counter charged) and then crashed before queueing, as DynamoDB
    holds it."""
    job_id = str(uuid.uuid4())
    request = NotificationRequest(EmailNotification("ada@example.com", "Hi", "<p>Hi</p>"))
    table = foundation().table
    DynamoCounters(table).charge(
        tenant_id,
        created.strftime("%Y%m%dT%H%M%S"),
        created.strftime("%Y%m%d%H%M"),
        Channel.EMAIL,
        rate_limit=1000,
        quota=None,
    )
    DynamoJobStore(table, 3).insert(NewJob(job_id, tenant_id, request, 5, 3, iso(created), 2_000_000_000))
    return job_id


def in_sweep_range(checkpoint: int) -> datetime:
    """A creation time that the sweeper's next run reads at its ``checkpoint``-th age (the
    template's sweep settings): the last run is noted three minutes ago, and the job reached that
    age a minute ago."""
    parameters = load_template(project_root() / "template.yaml")["Parameters"]
    stuck = timedelta(seconds=int(parameters["StuckJobSeconds"]["Default"]))
    window = timedelta(hours=int(parameters["SweepWindowHours"]["Default"]))
    now = datetime.now(UTC)
    DynamoSweepStore(foundation().table).swept(now - timedelta(minutes=3))
    return now - checkpoints(stuck, window)[checkpoint] - timedelta(minutes=1)


def queued_job_ids(ops: Ops) -> list[str]:
    return [json.loads(message["Body"])["jobId"] for message in ops.herald.queued(EMAIL_QUEUE)]


def test_the_sweeper_re_queues_a_job_that_lost_its_message_once_and_the_worker_delivers_it(ops: Ops) -> None:
    tenant_id, _ = ops.tenant()
    job_id = stored_without_message(tenant_id, in_sweep_range(0))
    fresh_id = stored_without_message(tenant_id, datetime.now(UTC) - timedelta(minutes=1))

    first = ops.invoke("SweeperFunction", sample("sweeper/scheduled.json"))
    second = ops.invoke("SweeperFunction", sample("sweeper/scheduled.json"))

    assert (first["requeued"], second["requeued"]) == (1, 0)
    assert queued_job_ids(ops) == [job_id]
    assert fresh_id not in queued_job_ids(ops)
    state = ops.herald.job_state(tenant_id, job_id)
    assert state is not None
    assert (state.status, state.sweeps) == (JobStatus.PENDING, 1)
    ops.deliver_waiting()
    delivered = ops.herald.job_state(tenant_id, job_id)
    assert delivered is not None
    assert (delivered.status, delivered.attempts) == (JobStatus.COMPLETED, 1)
    assert [m.summary.job_id for m in ops.sandbox.store.messages()] == [job_id]


def test_the_sweeper_re_queues_a_job_whose_worker_died_after_sqs_gave_up_on_its_message(ops: Ops) -> None:
    tenant_id, _ = ops.tenant()
    job_id = stored_without_message(tenant_id, in_sweep_range(1))
    an_hour_ago = int(time.time()) - 3600
    created = ops.herald.job_state(tenant_id, job_id)
    assert created is not None
    message = JobMessage(job_id, tenant_id, Channel.EMAIL, "startup", 0, None, 5, created.created_at)
    claimed = DynamoDeliveryStore(ops.herald.table).claim(
        message,
        now=an_hour_ago,
        lease_seconds=120,
        started_at="2026-01-01T00:00:00.000Z",
        max_attempts=3,
        expires_at=0,
    )
    assert claimed is not None

    assert ops.invoke("SweeperFunction", sample("sweeper/scheduled.json"))["requeued"] == 1

    [queued] = ops.herald.queued(EMAIL_QUEUE)
    assert json.loads(queued["Body"])["seenAttempts"] == 1


# ---------------------------------------------------------------- the operator CLI


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    capsys.readouterr()  # what the handlers printed before (metrics) is not the command's answer
    status = herald_cli(["--stack", STACK_NAME, "--region", "us-east-1", *args])
    out = capsys.readouterr().out
    return status, json.loads(out) if "--json" in args and out else out


def test_an_operator_lists_shows_and_redrives_a_dead_lettered_job(
    ops: Ops, capsys: pytest.CaptureFixture[str]
) -> None:
    tenant_id, job_id = ops.dead_lettered_job()

    status, listed = cli(capsys, "dlq", "list", "--json")
    assert status == 0
    [letter] = [row for row in listed if row["jobId"] == job_id]
    assert (letter["kind"], letter["tenantId"], letter["attempts"]) == ("copy", tenant_id, 1)

    status, shown = cli(capsys, "dlq", "show", job_id, "--json")
    assert status == 0
    assert shown[0]["body"]["payload"]["to"].startswith("fail-500+")

    status, job = cli(capsys, "jobs", "show", job_id, "--json")
    assert status == 0
    assert (job["tenantId"], job["status"], job["attempts"]) == (tenant_id, "failed", 1)

    status, redriven = cli(capsys, "dlq", "redrive", "--job", job_id, "--json")
    assert status == 0
    assert [(row["jobId"], row["outcome"]) for row in redriven] == [(job_id, "redriven")]
    assert ops.dlq_bodies() == []
    assert queued_job_ids(ops) == [job_id]
    status, job = cli(capsys, "jobs", "show", job_id, "--tenant", tenant_id, "--json")
    assert (job["status"], job["maxAttempts"]) == ("pending", 1 + 3)

    assert (
        herald_cli(["--stack", STACK_NAME, "--region", "us-east-1", "dlq", "redrive", "--job", job_id]) == 1
    )
    assert f"no dead-letter message for job {job_id}" in capsys.readouterr().err


def test_a_keyed_job_the_fifo_queue_gave_up_on_is_listed_and_redriven_into_its_keys_group(
    ops: Ops, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ordered queues give up into a FIFO dead-letter queue of their own: the CLI reads it beside
    the standard one, and the redrive sends the job back to its key's group."""
    tenant_id, key = ops.tenant()
    ops.herald.use_function_environment("ApiFunction", ops.environment())
    body = {"to": "ada@example.com", "subject": "Hi", "body": "<p>Hi</p>", "orderingKey": "order-7"}
    answer = ops.herald.api("POST", "/api/v1/notifications/email", body, key=key)
    assert answer.status == 202, answer.body
    job_id = str(answer.data["jobId"])
    [queued] = ops.herald.queued(ORDERED_QUEUE)
    client("sqs").delete_message(
        QueueUrl=ops.herald.queue_url(ORDERED_QUEUE), ReceiptHandle=queued["ReceiptHandle"]
    )
    message = decode_message(queued["Body"])
    store = DynamoDeliveryStore(ops.herald.table)
    now = int(time.time())
    assert store.claim(
        message,
        now=now,
        lease_seconds=60,
        started_at=iso(datetime.now(UTC)),
        max_attempts=1,
        expires_at=now + 3600,
    )
    log = DeliveryLog("log-1", 1, False, iso(datetime.now(UTC)), error_message="provider answered 500")
    assert store.finish(message, log, JobStatus.FAILED, "provider answered 500")
    # As SQS's redrive moves it once the message was received too often.
    client("sqs").send_message(
        QueueUrl=ops.herald.queue_url(ORDERED_DLQ),
        MessageBody=queued["Body"],
        MessageGroupId=queued["Attributes"]["MessageGroupId"],
        MessageDeduplicationId=queued["Attributes"]["MessageDeduplicationId"],
    )

    status, listed = cli(capsys, "dlq", "list", "--json")
    assert status == 0
    [letter] = [row for row in listed if row["jobId"] == job_id]
    assert (letter["kind"], letter["tenantId"]) == ("redriven", tenant_id)

    status, redriven = cli(capsys, "dlq", "redrive", "--job", job_id, "--json")
    assert status == 0
    assert [(row["jobId"], row["outcome"]) for row in redriven] == [(job_id, "redriven")]
    assert ops.herald.queued(ORDERED_DLQ) == []
    [again] = ops.herald.queued(ORDERED_QUEUE)
    assert (json.loads(again["Body"])["jobId"], json.loads(again["Body"])["orderingKey"]) == (
        job_id,
        "order-7",
    )
    assert queued_job_ids(ops) == []


def test_an_unknown_job_is_a_clear_error(ops: Ops, capsys: pytest.CaptureFixture[str]) -> None:
    status = herald_cli(["--stack", STACK_NAME, "--region", "us-east-1", "jobs", "show", str(uuid.uuid4())])
    assert status == 1
    assert "No job" in capsys.readouterr().err


def test_an_operator_redrives_what_failed_since_a_time_and_a_bad_time_is_refused(
    ops: Ops, capsys: pytest.CaptureFixture[str]
) -> None:
    _, job_id = ops.dead_lettered_job()

    status, later = cli(capsys, "dlq", "redrive", "--since", "2999-01-01T00:00:00Z", "--json")
    assert (status, later) == (0, [])
    status, redriven = cli(capsys, "dlq", "redrive", "--since", "2000-01-01T00:00:00+02:00", "--json")
    assert status == 0
    assert [(row["jobId"], row["outcome"]) for row in redriven] == [(job_id, "redriven")]

    for bad, reason in [
        ("yesterday", "must be an RFC 3339 date-time with an offset, such as 2026-12-01T09:30:00Z"),
        ("0001-01-01T00:00:00+14:00", "lies outside the years 0001-9999 in UTC"),
    ]:
        with pytest.raises(SystemExit):
            herald_cli(["--stack", STACK_NAME, "--region", "us-east-1", "dlq", "redrive", "--since", bad])
        assert f"argument --since: {bad}: {reason}" in capsys.readouterr().err
