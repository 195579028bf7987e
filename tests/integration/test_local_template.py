"""The local runtime reads everything from a template: routes, environments, event sources,
schedules and alarms, resolved through moto's CloudFormation; and it plays them as AWS does
(API Gateway's payload 2.0, Lambda's SQS partial batch failures)."""

from __future__ import annotations

import base64
import http.client
import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from moto import mock_aws

from herald.domain.inbound import Processor
from herald.domain.money import Money
from herald.domain.vendors import TENANT_PROVIDERS, webhook_route
from herald.settings import CheckoutSettings, PaymentSettings
from herald_local.apigateway.events import ApiContext, HttpRequest, build_event, map_response
from herald_local.apigateway.gateway import Gateway, GatewayServer
from herald_local.apigateway.routes import RouteTable
from herald_local.awslambda.functions import FunctionPool
from herald_local.cloudformation.intrinsics import (
    StandIn,
    UnresolvableReference,
    json_document,
    with_stand_ins,
)
from herald_local.cloudformation.parameters import (
    PROVIDER_URL_PARAMETERS,
    PUBLIC_ORIGIN_PARAMETER,
    local_parameters,
    local_secrets,
)
from herald_local.cloudformation.resources import create_resources
from herald_local.cloudformation.template import load_template, translate
from herald_local.cloudformation.topology import QueueSourceSpec, RouteSpec, Topology
from herald_local.cloudwatch.alarms import AlarmState, alarm_player
from herald_local.cloudwatch.metrics import LocalMetrics
from herald_local.config import ConfigError, LocalConfig, project_root
from herald_local.event_sources.pollers import QueuePoller
from herald_local.event_sources.schedule_expressions import UnsupportedExpression, parse_expression
from herald_local.event_sources.schedules import schedule_payload, scheduled_event
from herald_local.event_sources.sns_bridge import SnsBridge
from herald_local.host.listeners import bound_port, listen, listen_on
from herald_local.stack import LocalStack, checkout_prices

REGION = "us-east-1"
GATEWAY = "http://127.0.0.1:3000"
NO_RETRIES = Config(region_name=REGION, retries={"total_max_attempts": 1}, connect_timeout=2, read_timeout=10)
ROOT = project_root()
WAIT_SECONDS = 20.0
# A visibility timeout no test outlasts: a record comes back only when a test ends it itself.
LONG_VISIBILITY_SECONDS = 300

# The routes the NotifyKit SDK calls (docs/api.md), as a client calls them.
PUBLIC_ROUTES = [
    ("GET", "/api/v1/ping", "GET /api/v1/ping"),
    ("GET", "/api/v1/info", "GET /api/v1/info"),
    ("GET", "/api/v1/health", "GET /api/v1/health"),
    ("POST", "/api/v1/notifications/email", "POST /api/v1/notifications/email"),
    ("POST", "/api/v1/notifications/webhook", "POST /api/v1/notifications/webhook"),
    ("GET", "/api/v1/notifications/jobs/job-1", "GET /api/v1/notifications/jobs/{id}"),
    ("GET", "/api/v1/notifications/jobs", "GET /api/v1/notifications/jobs"),
    ("POST", "/api/v1/notifications/jobs/job-1/retry", "POST /api/v1/notifications/jobs/{id}/retry"),
]
ACCOUNT_ROUTES = [
    ("GET", "/api/v1/account"),
    ("POST", "/api/v1/account/api-key/rotate"),
    ("PUT", "/api/v1/account/providers/SENDGRID"),
    ("DELETE", "/api/v1/account/webhook-secret"),
    ("DELETE", "/api/v1/account/suppressions/a@example.com"),
]

SYNTHETIC_TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Parameters:
  Stage: {Type: String, Default: test}
  RecordFile: {Type: String, Default: /dev/null}
  WorkerConcurrency: {Type: Number, Default: 3}
Globals:
  Function:
    Runtime: python3.12
    Timeout: 10
    Environment:
      Variables:
        RECORD_FILE: !Ref RecordFile
        REPORTING_QUEUE: !Ref ReportingQueue
Resources:
  DeadLetters:
    Type: AWS::SQS::Queue
  ReportingQueue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub synthetic-${Stage}-reporting
      VisibilityTimeout: 1
      RedrivePolicy: {deadLetterTargetArn: !GetAtt DeadLetters.Arn, maxReceiveCount: 50}
  AllOrNothingQueue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 1
  AlertTopic:
    Type: AWS::SNS::Topic
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: worker/
      Handler: app.handler
      Events:
        Reporting:
          Type: SQS
          Properties:
            Queue: !GetAtt ReportingQueue.Arn
            BatchSize: 5
            FunctionResponseTypes: [ReportBatchItemFailures]
            ScalingConfig: {MaximumConcurrency: !Ref WorkerConcurrency}
        AllOrNothing:
          Type: SQS
          Properties:
            Queue: !GetAtt AllOrNothingQueue.Arn
            BatchSize: 2
            MaximumBatchingWindowInSeconds: 1
        Every5Minutes:
          Type: Schedule
          Properties: {Schedule: rate(5 minutes)}
        Nightly:
          Type: ScheduleV2
          Properties:
            ScheduleExpression: cron(0 3 * * ? *)
            Input: '{"task": "nightly"}'
        Alerts:
          Type: SNS
          Properties: {Topic: !Ref AlertTopic}
  Echo:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: echo/
      Handler: app.handler
      Timeout: 1
      MemorySize: 256
      Events:
        Item:
          Type: HttpApi
          Properties: {Path: "/items/{id}", Method: GET}
        Upload:
          Type: HttpApi
          Properties: {Path: /upload, Method: POST}
  BacklogAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmName: !Sub synthetic-${Stage}-backlog
      Namespace: AWS/SQS
      MetricName: ApproximateNumberOfMessagesVisible
      Dimensions: [{Name: QueueName, Value: !GetAtt ReportingQueue.QueueName}]
      Statistic: Maximum
      Period: 60
      EvaluationPeriods: 1
      Threshold: 2
      ComparisonOperator: GreaterThanThreshold
      AlarmActions: [!Ref AlertTopic]
"""

WORKER_CODE = """\
import json, os

def handler(event, context):
    records = event["Records"]
    if records[0].get("EventSource") == "aws:sns":
        with open(os.environ["RECORD_FILE"], "a") as out:
            out.write(json.dumps({"sns": records[0]["Sns"], "subscription": records[0]["EventSubscriptionArn"]}) + "\\n")
        return None
    with open(os.environ["RECORD_FILE"], "a") as out:
        for record in records:
            out.write(json.dumps({"body": record["body"], "count": record["attributes"]["ApproximateReceiveCount"], "receipt": record["receiptHandle"]}) + "\\n")
    bodies = {record["body"] for record in records}
    if "crash" in bodies:
        raise RuntimeError("synthetic crash")
    if "invalid" in bodies:
        return {"batchItemFailures": [{"itemIdentifier": "not-a-message-of-this-batch"}]}
    return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in records if r["body"].startswith("fail")]}
"""

ECHO_CODE = """\
import json, time

IN_FLIGHT = []  # module state, as Powertools' resolver keeps the current request

def handler(event, context):
    IN_FLIGHT.append(context.aws_request_id)
    try:
        if len(IN_FLIGHT) > 1:
            raise RuntimeError("two invocations at once in one execution environment")
        time.sleep(event.get("sleep", 0))
    finally:
        IN_FLIGHT.remove(context.aws_request_id)
    seen = {
        "function_name": context.function_name,
        "memory_limit_in_mb": context.memory_limit_in_mb,
        "invoked_function_arn": context.invoked_function_arn,
        "aws_request_id": context.aws_request_id,
        "remaining_ms": context.get_remaining_time_in_millis(),
    }
    body = json.dumps({"event": event, "context": seen})
    return {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": body}
"""


def _client(service: str) -> Any:
    return boto3.client(service, region_name=REGION, config=NO_RETRIES)  # type: ignore[call-overload]


@pytest.fixture
def moto(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for variable in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        yield


def _real_topology(config: LocalConfig | None = None) -> Topology:
    config = config or LocalConfig.from_env({"AWS_DEFAULT_REGION": REGION})
    template = load_template(config.template_path)
    parameters = local_parameters(template, config, lambda name: f"http://127.0.0.1:3100/{name}")
    translated = translate(template, parameters, REGION)
    # Planned against a bridge address: nothing publishes to the topic in these tests.
    return create_resources(
        translated,
        parameters,
        _client,
        root=ROOT,
        gateway_url=GATEWAY,
        sns_bridge_url="http://127.0.0.1:9",
        secrets=local_secrets(template, parameters, config),
    )


@dataclass
class Synthetic:
    topology: Topology
    record_file: Path


def _synthetic_topology(root: Path, sns_bridge_url: str) -> Synthetic:
    (root / "worker").mkdir()
    (root / "worker" / "app.py").write_text(WORKER_CODE)
    (root / "echo").mkdir()
    (root / "echo" / "app.py").write_text(ECHO_CODE)
    (root / "template.yaml").write_text(SYNTHETIC_TEMPLATE)
    record_file = root / "records.jsonl"
    record_file.touch()
    parameters = {"RecordFile": str(record_file)}
    translated = translate(load_template(root / "template.yaml"), parameters, REGION)
    topology = create_resources(
        translated, parameters, _client, root=root, gateway_url=GATEWAY, sns_bridge_url=sns_bridge_url
    )
    return Synthetic(topology, record_file)


@pytest.fixture
def bridge() -> Iterator[SnsBridge]:
    sns_bridge = SnsBridge()
    sns_bridge.start()
    yield sns_bridge
    sns_bridge.stop()


@pytest.fixture
def synthetic(moto: None, tmp_path: Path, bridge: SnsBridge) -> Synthetic:
    return _synthetic_topology(tmp_path, bridge.url)


@pytest.fixture
def pool(synthetic: Synthetic) -> Iterator[FunctionPool]:
    functions = FunctionPool(
        synthetic.topology.functions.values(), "http://127.0.0.1:1", REGION, "http://127.0.0.1:2"
    )
    functions.start()
    yield functions
    functions.stop()


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


# ------------------------------------------------------------------ the real template


def test_every_public_route_of_the_contract_is_served_by_its_own_route(moto: None) -> None:
    """Given the real template, When each route the SDK calls is requested, Then a route of its own
    (not the catch-all) serves it with the API function."""
    table = RouteTable(_real_topology().routes)
    for method, path, route_key in PUBLIC_ROUTES:
        match = table.match(method, path)
        assert match is not None, f"{method} {path} is not served"
        assert match.route.route_key == route_key
        assert match.route.function == "ApiFunction"


def test_the_greedy_catch_all_ranks_last_and_serves_account_routes(moto: None) -> None:
    table = RouteTable(_real_topology().routes)
    assert table.routes[-1].path.endswith("{proxy+}")
    for method, path in ACCOUNT_ROUTES:
        match = table.match(method, path)
        assert match is not None
        assert match.route.route_key == "ANY /api/v1/{proxy+}"
        assert match.path_parameters["proxy"] == path.removeprefix("/api/v1/")


def test_a_method_a_route_does_not_have_falls_through_to_the_catch_all_and_other_paths_are_unmatched(
    moto: None,
) -> None:
    table = RouteTable(_real_topology().routes)
    wrong_method = table.match("GET", "/api/v1/notifications/jobs/job-1/retry")
    assert wrong_method is not None
    assert wrong_method.route.route_key == "ANY /api/v1/{proxy+}"
    assert table.match("GET", "/api/v2/ping") is None
    assert table.match("GET", "/api/v1") is None


TENANT = "6f1c2b4e-8d2a-4c47-9a57-3f1e0c9b2d71"
INBOUND_ROUTES = [
    *(
        (webhook_route(name).replace("{tenantId}", TENANT), f"{name.slug.capitalize()}WebhookFunction")
        for name in TENANT_PROVIDERS
    ),
    ("/api/v1/payments/paystack/webhook", "PaystackWebhookFunction"),
    ("/api/v1/payments/polar/webhook", "PolarWebhookFunction"),
]


def test_each_inbound_webhook_is_served_by_its_own_function_not_the_catch_all(moto: None) -> None:
    """As in API Gateway, the more specific route wins over ``/api/v1/{proxy+}``; other methods on
    those paths fall through to the API function, which answers 404 in the error envelope."""
    table = RouteTable(_real_topology().routes)
    for path, function in INBOUND_ROUTES:
        match = table.match("POST", path)
        assert match is not None
        assert match.route.function == function, path
        fallback = table.match("GET", path)
        assert fallback is not None
        assert fallback.route.function == "ApiFunction"
    tenant_route = table.match("POST", INBOUND_ROUTES[0][0])
    assert tenant_route is not None
    assert tenant_route.path_parameters == {"tenantId": TENANT}


def test_the_platform_secrets_are_secure_strings_named_by_the_template_with_the_local_values(
    moto: None,
) -> None:
    config = LocalConfig.from_env(
        {"AWS_DEFAULT_REGION": REGION, "HERALD_POLAR_WEBHOOK_SECRET": "whsec_dGVzdA=="}
    )
    topology = _real_topology(config)
    polar = topology.functions["PolarWebhookFunction"].environment
    paystack = topology.functions["PaystackWebhookFunction"].environment

    ssm = _client("ssm")
    secret = ssm.get_parameter(Name=polar["HERALD_POLAR_SECRET_PARAMETER"], WithDecryption=True)["Parameter"]
    assert (secret["Type"], secret["Value"]) == ("SecureString", "whsec_dGVzdA==")
    name = paystack["HERALD_PAYSTACK_SECRET_PARAMETER"]
    assert (
        ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"]
        == (config.payments["HERALD_PAYSTACK_SECRET_KEY"])
    )
    assert polar["HERALD_POLAR_PRODUCT_INDIE"] == config.payments["HERALD_POLAR_PRODUCT_INDIE"]
    assert "HERALD_POLAR_SECRET_PARAMETER" not in topology.functions["ApiFunction"].environment


def test_the_sandboxs_checkouts_charge_the_prices_the_payment_functions_read(moto: None) -> None:
    """Its Pay must upgrade the tenant: the local stack's plans and prices reach the functions through
    the template, and the sandbox through the same variables."""
    config = LocalConfig.from_env(
        {"AWS_DEFAULT_REGION": REGION, "HERALD_PAYSTACK_PRICE_STARTUP": "2000000 NGN"}
    )
    topology = _real_topology(config)
    sold: dict[str, Money] = {}
    # What the Billing page shows (ApiFunction's plans answer) is what the payment functions check.
    shown = CheckoutSettings.from_env(topology.functions["ApiFunction"].environment)
    for processor, function, offered in (
        (Processor.POLAR, "PolarWebhookFunction", shown.polar_catalog),
        (Processor.PAYSTACK, "PaystackWebhookFunction", shown.paystack_catalog),
    ):
        catalog = PaymentSettings.from_env(processor, topology.functions[function].environment).catalog
        assert offered == catalog
        sold |= {key: catalog.prices[plan] for key, plan in catalog.plans.items()}

    assert checkout_prices(config.payments) == sold
    assert (len(sold), sold[config.payments["HERALD_PAYSTACK_PLAN_STARTUP"]]) == (4, Money(2_000_000, "NGN"))


def _unresolved(value: str) -> bool:
    return "Fn::" in value or "{'Ref'" in value or "${" in value or value.startswith("HeraldLocal")


def test_every_function_of_the_real_template_gets_a_fully_resolved_environment(moto: None) -> None:
    """Given the real template, When resolved through moto, Then every function has every Globals
    variable, and no value is an unresolved intrinsic."""
    globals_variables = set(
        load_template(ROOT / "template.yaml")["Globals"]["Function"]["Environment"]["Variables"]
    )
    topology = _real_topology()
    assert topology.functions
    table = topology.outputs["TableName"]
    for spec in topology.functions.values():
        assert globals_variables <= set(spec.environment), spec.logical_id
        assert not [name for name, value in spec.environment.items() if _unresolved(value)], spec.logical_id
        assert spec.environment["HERALD_TABLE"] == table
        assert spec.environment["HERALD_SENDGRID_BASE_URL"] == "http://127.0.0.1:3100/sendgrid"
        assert Path(spec.code_dir, spec.handler.split(".")[0] + ".py").is_file()
        assert Path(spec.layer_dirs[0], "herald").is_dir()


def test_resources_exist_in_moto_and_what_its_cloudformation_drops_is_reapplied(moto: None) -> None:
    topology = _real_topology()
    dynamodb = _client("dynamodb")
    ttl = dynamodb.describe_time_to_live(TableName=topology.outputs["TableName"])["TimeToLiveDescription"]
    assert ttl["TimeToLiveStatus"] == "ENABLED"
    assert _client("kms").describe_key(KeyId=topology.outputs["KmsKeyId"])["KeyMetadata"]["Enabled"]
    assert _client("sqs").get_queue_attributes(QueueUrl=topology.outputs["DeadLetterQueueUrl"])
    assert topology.outputs["ApiUrl"] == GATEWAY
    assert topology.outputs["ApiRootUrl"] == f"{GATEWAY}/api/v1"
    # The functions that write links get the gateway's origin as the stack's public origin.
    for name in ("ApiFunction", "ConsoleFunction"):
        assert topology.functions[name].environment["HERALD_PUBLIC_ORIGIN"] == GATEWAY


def test_the_local_parameters_point_every_provider_at_the_sandbox() -> None:
    config = LocalConfig.from_env({"HERALD_LOCAL_RETRY_BASE_DELAY": "2", "HERALD_API_PORT": "3007"})
    parameters = local_parameters(
        load_template(config.template_path), config, lambda name: f"http://sandbox/{name}"
    )
    for parameter, provider in PROVIDER_URL_PARAMETERS.items():
        assert parameters[parameter] == f"http://sandbox/{provider}"
    assert parameters["RetryBaseDelaySeconds"] == "2"
    assert parameters[PUBLIC_ORIGIN_PARAMETER] == "http://127.0.0.1:3007"
    # The template's own per-client allowance of sign-in codes unless the harness raises it.
    assert "SignInCodesPerClientPerHour" not in parameters


def test_the_harness_can_raise_the_per_client_allowance_of_sign_in_codes() -> None:
    config = LocalConfig.from_env({"HERALD_LOCAL_SIGNIN_CODES_PER_CLIENT": "1000"})
    parameters = local_parameters(load_template(config.template_path), config, lambda name: name)
    assert parameters["SignInCodesPerClientPerHour"] == "1000"
    with pytest.raises(ConfigError, match="HERALD_LOCAL_SIGNIN_CODES_PER_CLIENT must be a whole number"):
        LocalConfig.from_env({"HERALD_LOCAL_SIGNIN_CODES_PER_CLIENT": "0"})


def test_the_sample_events_are_routes_of_the_template(moto: None) -> None:
    route_keys = {route.route_key for route in _real_topology().routes}
    samples = sorted(
        [*(ROOT / "events" / "api").glob("*.json"), *(ROOT / "events" / "inbound").glob("*.json")]
    )
    assert samples
    for sample in samples:
        event = json.loads(sample.read_text())
        assert event["version"] == "2.0"
        assert event["routeKey"] in route_keys, sample.name


# ------------------------------------------------------------------ a synthetic template


def test_event_sources_schedules_alarms_and_subscriptions_of_a_template_are_picked_up(
    synthetic: Synthetic,
) -> None:
    topology = synthetic.topology
    sources = {source.logical_id: source for source in topology.queue_sources}
    reporting, all_or_nothing = sources["WorkerReporting"], sources["WorkerAllOrNothing"]
    assert (reporting.function, reporting.batch_size, reporting.max_concurrency) == ("Worker", 5, 3)
    assert reporting.report_batch_item_failures
    assert reporting.queue_name == "synthetic-test-reporting"
    assert (all_or_nothing.batch_size, all_or_nothing.batching_window_seconds) == (2, 1)
    assert not all_or_nothing.report_batch_item_failures
    schedules = {schedule.expression: schedule for schedule in topology.schedules}
    assert schedules["rate(5 minutes)"].function == "Worker"
    assert schedules["rate(5 minutes)"].sends_event
    assert schedules["cron(0 3 * * ? *)"].input == '{"task": "nightly"}'
    (alarm,) = topology.alarms
    assert alarm.name == "synthetic-test-backlog"
    assert alarm.dimensions == (("QueueName", "synthetic-test-reporting"),)
    assert alarm.alarm_actions == (topology.subscriptions[0].topic_arn,)
    assert topology.subscriptions[0].function == "Worker"
    assert topology.functions["Worker"].environment["REPORTING_QUEUE"].endswith("/synthetic-test-reporting")


def test_a_rule_sends_the_scheduled_event_and_a_scheduler_schedule_its_input(synthetic: Synthetic) -> None:
    schedules = {schedule.expression: schedule for schedule in synthetic.topology.schedules}
    fired = datetime(2026, 1, 2, 3, 0, tzinfo=UTC)
    event = schedule_payload(schedules["rate(5 minutes)"], fired, REGION)
    assert event == {**scheduled_event(schedules["rate(5 minutes)"], fired, REGION), "id": event["id"]}
    assert event["detail-type"] == "Scheduled Event"
    assert event["time"] == "2026-01-02T03:00:00Z"
    assert event["resources"][0].startswith("arn:aws:events:us-east-1:123456789012:rule/")
    assert schedule_payload(schedules["cron(0 3 * * ? *)"], fired, REGION) == {"task": "nightly"}


def test_an_alarm_notifies_on_the_transition_to_alarm_and_back_only(synthetic: Synthetic) -> None:
    (alarm,) = synthetic.topology.alarms
    state = AlarmState(alarm, REGION)
    now = datetime(2026, 1, 2, 3, 0, tzinfo=UTC)
    assert state.observe(0, now)["NewStateValue"] == "OK"  # type: ignore[index]
    assert state.observe(1, now) is None
    notification = state.observe(3, now)
    assert notification is not None
    assert notification["NewStateValue"] == "ALARM"
    assert notification["OldStateValue"] == "OK"
    assert notification["Trigger"]["Dimensions"] == [
        {"value": "synthetic-test-reporting", "name": "QueueName"}
    ]
    assert notification["Region"] == "US East (N. Virginia)"
    assert state.subject() == 'ALARM: "synthetic-test-backlog" in US East (N. Virginia)'
    assert state.observe(5, now) is None


def test_an_alarm_going_off_reaches_the_subscribed_function_through_sns(
    synthetic: Synthetic, pool: FunctionPool, bridge: SnsBridge
) -> None:
    """Given a queue over the alarm's threshold, When the alarm is evaluated, Then CloudWatch's
    notification is published to the topic and the subscribed function gets the SNS event."""
    topology = synthetic.topology
    bridge.attach(
        topology.subscriptions, lambda function, event: pool[function].invoke(event), _client("sns")
    )
    sqs = _client("sqs")
    queue_url = sqs.get_queue_url(QueueName="synthetic-test-reporting")["QueueUrl"]
    for body in ("a", "b", "c"):
        sqs.send_message(QueueUrl=queue_url, MessageBody=body)
    (alarm,) = topology.alarms
    player = alarm_player(
        alarm, sqs=sqs, sns=_client("sns"), metrics=LocalMetrics(), region=REGION, cadence=1
    )
    assert player is not None
    player.evaluate()
    _wait_for(lambda: any("sns" in record for record in _records(synthetic.record_file)), "the SNS event")
    (delivery,) = [record for record in _records(synthetic.record_file) if "sns" in record]
    notification = delivery["sns"]
    assert notification["TopicArn"] == topology.subscriptions[0].topic_arn
    assert notification["Subject"] == 'ALARM: "synthetic-test-backlog" in US East (N. Virginia)'
    assert json.loads(notification["Message"])["NewStateValue"] == "ALARM"
    assert notification["Signature"]
    assert delivery["subscription"].startswith(f"{notification['TopicArn']}:")


# ------------------------------------------------------------------ API Gateway payload 2.0


def _request(**overrides: Any) -> HttpRequest:
    values: dict[str, Any] = {
        "method": "GET",
        "target": "/items/a%20b?tag=x&tag=y&empty=&q=caf%C3%A9",
        "headers": [
            ("Host", "127.0.0.1:3000"),
            ("X-Trace", "one"),
            ("x-trace", "two"),
            ("Cookie", "a=1; b=2"),
        ],
        "body": b"",
        "source_ip": "127.0.0.1",
        "server_port": 3000,
    }
    values.update(overrides)
    return HttpRequest(**values)


def _event(request: HttpRequest, route_path: str = "/items/{id}", method: str = "GET") -> dict[str, Any]:
    table = RouteTable([RouteSpec("apiid12345", method, route_path, "Echo", 30.0)])
    match = table.match(request.method, request.path)
    assert match is not None
    return build_event(request, match, ApiContext("apiid12345"))


def test_the_event_carries_path_parameters_decoded_and_query_duplicates_comma_joined() -> None:
    event = _event(_request())
    assert event["version"] == "2.0"
    assert event["routeKey"] == "GET /items/{id}"
    assert event["rawPath"] == "/items/a b"
    assert event["rawQueryString"] == "tag=x&tag=y&empty=&q=caf%C3%A9"
    assert event["pathParameters"] == {"id": "a b"}
    assert event["queryStringParameters"] == {"tag": "x,y", "empty": "", "q": "café"}
    context = event["requestContext"]
    assert context["stage"] == "$default"
    assert context["http"] == {
        "method": "GET",
        "path": "/items/a b",
        "protocol": "HTTP/1.1",
        "sourceIp": "127.0.0.1",
        "userAgent": "",
    }
    assert context["routeKey"] == "GET /items/{id}"
    assert context["domainName"] == "127.0.0.1:3000"
    assert isinstance(context["timeEpoch"], int)


def test_the_domain_name_is_the_gateways_own_address_never_the_clients_host_header() -> None:
    event = _event(_request(headers=[("Host", "evil.example")], server_port=3001))
    assert event["requestContext"]["domainName"] == "127.0.0.1:3001"
    assert event["headers"]["host"] == "evil.example"


def test_header_names_are_lower_cased_duplicates_joined_and_cookies_moved_out() -> None:
    event = _event(_request())
    assert event["headers"]["x-trace"] == "one,two"
    assert "cookie" not in event["headers"]
    assert event["cookies"] == ["a=1", "b=2"]
    assert all(name == name.lower() for name in event["headers"])


def test_binary_bodies_are_base64_encoded_and_text_bodies_passed_as_text() -> None:
    binary = bytes(range(256))
    for content_type, body, encoded in [
        ("application/octet-stream", binary, True),
        (None, b"no type at all", True),
        ("application/x-www-form-urlencoded", b"a=1", True),
        ("application/json; charset=utf-8", b'{"a": 1}', False),
        ("text/plain", "héllo".encode(), False),
    ]:
        headers = [("Content-Type", content_type)] if content_type else []
        event = _event(
            _request(method="POST", target="/upload", headers=headers, body=body), "/upload", "POST"
        )
        assert event["isBase64Encoded"] is encoded, content_type
        assert (base64.b64decode(event["body"]) if encoded else event["body"].encode()) == body


def test_an_event_without_body_query_or_parameters_leaves_them_out() -> None:
    event = _event(_request(target="/upload", headers=[], method="POST"), "/upload", "POST")
    assert "body" not in event
    assert "queryStringParameters" not in event
    assert "pathParameters" not in event
    assert "cookies" not in event
    assert event["isBase64Encoded"] is False


def test_responses_map_as_payload_2_0() -> None:
    structured = map_response(
        json.dumps(
            {
                "statusCode": 201,
                "headers": {"Content-Type": "text/plain"},
                "multiValueHeaders": {"X-Many": ["1", "2"]},
                "cookies": ["s=1; HttpOnly"],
                "body": base64.b64encode(b"\x00\x01").decode(),
                "isBase64Encoded": True,
            }
        ).encode()
    )
    assert structured.status == 201
    assert structured.body == b"\x00\x01"
    assert ("X-Many", "1") in structured.headers
    assert ("X-Many", "2") in structured.headers
    assert ("Set-Cookie", "s=1; HttpOnly") in structured.headers
    bare = map_response(b'{"message": "no statusCode"}')
    assert (bare.status, bare.body) == (200, b'{"message": "no statusCode"}')
    assert ("Content-Type", "application/json") in bare.headers


def test_the_gateway_serves_a_template_route_over_http_with_the_event_api_gateway_sends(
    synthetic: Synthetic, pool: FunctionPool
) -> None:
    """Given a synthetic echo function behind the gateway, When a client sends repeated headers and
    query parameters, Then the function saw them as API Gateway would pass them."""
    server = GatewayServer(Gateway(RouteTable(synthetic.topology.routes), pool.__getitem__), listen(0))
    server.start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.putrequest("GET", "/items/42?tag=a&tag=b")
        connection.putheader("X-Repeated", "1")
        connection.putheader("X-Repeated", "2")
        connection.endheaders()
        response = connection.getresponse()
        event = json.loads(response.read())["event"]
        assert response.status == 200
        assert response.getheader("apigw-requestid")
        assert event["pathParameters"] == {"id": "42"}
        assert event["queryStringParameters"] == {"tag": "a,b"}
        assert event["headers"]["x-repeated"] == "1,2"
        connection.request("GET", "/nowhere")
        missing = connection.getresponse()
        assert (missing.status, json.loads(missing.read())["code"]) == (404, "not_found")
        connection.putrequest("POST", "/upload")
        connection.putheader("Content-Length", str(10 * 1024 * 1024 + 1))
        connection.endheaders()
        too_large = connection.getresponse()
        assert (too_large.status, json.loads(too_large.read())["code"]) == (413, "request_entity_too_large")
        connection.close()
    finally:
        server.stop()


# ------------------------------------------------------------------ SQS pollers


def _records(record_file: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record_file.read_text().splitlines() if line.strip()]


def _received(record_file: Path, body: str, times: int) -> bool:
    return sum(1 for record in _records(record_file) if record.get("body") == body) >= times


def _messages_left(queue_url: str) -> int:
    attributes = _client("sqs").get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


@pytest.fixture
def poll(synthetic: Synthetic, pool: FunctionPool) -> Iterator[Callable[[str, list[str]], str]]:
    """Starts the poller of one event source after sending it the given bodies (the queue's visibility
    timeout set first, if given); returns the queue URL."""
    sqs = _client("sqs")
    pollers: list[QueuePoller] = []

    def start(logical_id: str, bodies: list[str], visibility_seconds: int | None = None) -> str:
        source: QueueSourceSpec = next(
            s for s in synthetic.topology.queue_sources if s.logical_id == logical_id
        )
        queue_url = str(sqs.get_queue_url(QueueName=source.queue_name)["QueueUrl"])
        if visibility_seconds is not None:
            sqs.set_queue_attributes(
                QueueUrl=queue_url, Attributes={"VisibilityTimeout": str(visibility_seconds)}
            )
        for body in bodies:
            sqs.send_message(QueueUrl=queue_url, MessageBody=body)
        poller = QueuePoller(source, sqs, queue_url, pool[source.function].invoke, REGION)
        poller.start()
        pollers.append(poller)
        return queue_url

    yield start
    for poller in pollers:
        poller.stop()


def _visibility_runs_out(queue_url: str, record_file: Path, body: str) -> None:
    """Plays the end of the visibility timeout of ``body``'s last receipt now, as SQS would later."""
    *_, last = (record for record in _records(record_file) if record["body"] == body)
    _client("sqs").change_message_visibility(
        QueueUrl=queue_url, ReceiptHandle=last["receipt"], VisibilityTimeout=0
    )


def test_only_the_records_not_reported_as_failed_are_deleted(synthetic: Synthetic, poll: Any) -> None:
    # Nothing comes back by itself during the test, however slow the invocation: only the failed
    # record, once the test ends its visibility after the batch's successes were deleted.
    queue_url = poll(
        "WorkerReporting", ["ok-1", "fail-1", "ok-2"], visibility_seconds=LONG_VISIBILITY_SECONDS
    )
    _wait_for(lambda: _messages_left(queue_url) == 1, "the batch's successes to be deleted")
    _visibility_runs_out(queue_url, synthetic.record_file, "fail-1")
    _wait_for(lambda: _received(synthetic.record_file, "fail-1", 2), "the failed record to come back")
    assert _messages_left(queue_url) == 1
    delivered = sorted(
        (r["body"], r["count"]) for r in _records(synthetic.record_file) if r["body"].startswith("ok")
    )
    assert delivered == [("ok-1", "1"), ("ok-2", "1")]


def test_an_invalid_batch_answer_deletes_no_record(synthetic: Synthetic, poll: Any) -> None:
    queue_url = poll("WorkerReporting", ["ok-1", "invalid"])
    _wait_for(
        lambda: (
            _received(synthetic.record_file, "ok-1", 2) and _received(synthetic.record_file, "invalid", 2)
        ),
        "both records to come back",
    )
    assert _messages_left(queue_url) == 2


def test_a_function_error_deletes_no_record(synthetic: Synthetic, poll: Any) -> None:
    queue_url = poll("WorkerReporting", ["ok-1", "crash"])
    _wait_for(
        lambda: _received(synthetic.record_file, "ok-1", 2) and _received(synthetic.record_file, "crash", 2),
        "both records to come back",
    )
    assert _messages_left(queue_url) == 2


def test_without_report_batch_item_failures_a_successful_batch_is_deleted_whole(
    synthetic: Synthetic, poll: Any
) -> None:
    # No record comes back by itself before the batch's answer, however slow the invocation.
    queue_url = poll("WorkerAllOrNothing", ["fail-1", "ok-1"], visibility_seconds=LONG_VISIBILITY_SECONDS)
    _wait_for(lambda: _messages_left(queue_url) == 0, "the whole batch to be deleted")
    assert sorted(r["body"] for r in _records(synthetic.record_file)) == ["fail-1", "ok-1"]


# ------------------------------------------------------------------ function runners


def test_a_function_gets_a_lambda_context_from_its_template_settings(pool: FunctionPool) -> None:
    invocation = pool["Echo"].invoke({})
    context = json.loads(invocation.document()["body"])["context"]
    assert context["function_name"] == "Echo"
    assert context["memory_limit_in_mb"] == "256"
    assert context["invoked_function_arn"] == "arn:aws:lambda:us-east-1:123456789012:function:Echo"
    assert context["aws_request_id"] == invocation.request_id
    assert 0 < context["remaining_ms"] <= 1000


def test_a_handler_error_is_answered_as_lambda_does_and_the_runner_serves_on(pool: FunctionPool) -> None:
    crash = {
        "Records": [
            {
                "messageId": "m-1",
                "receiptHandle": "r-1",
                "body": "crash",
                "attributes": {"ApproximateReceiveCount": "1"},
            }
        ]
    }
    failed = pool["Worker"].invoke(crash)
    assert failed.function_error == "Unhandled"
    error = failed.document()
    assert (error["errorType"], error["errorMessage"]) == ("RuntimeError", "synthetic crash")
    assert any("app.py" in frame for frame in error["stackTrace"])
    assert not any("herald_local" in frame for frame in error["stackTrace"])
    fine = pool["Worker"].invoke({"Records": [{**crash["Records"][0], "body": "ok"}]})
    assert not fine.failed
    assert fine.document() == {"batchItemFailures": []}


def test_a_handler_slower_than_its_timeout_is_answered_with_lambdas_timeout_error(pool: FunctionPool) -> None:
    timed_out = pool["Echo"].invoke({"sleep": 3})
    assert timed_out.failed
    assert timed_out.document()["errorType"] == "Sandbox.Timedout"
    assert "Task timed out after 1.00 seconds" in timed_out.document()["errorMessage"]
    # The timed-out handler still sleeps; the next invocation must not run beside it.
    assert not pool["Echo"].invoke({}).failed


def test_concurrent_invocations_each_run_alone_in_an_execution_environment(pool: FunctionPool) -> None:
    """Given a handler that keeps module state per invocation (as Powertools' resolver does), When
    eight invocations arrive at once, Then every one succeeds: none shares an environment."""
    with ThreadPoolExecutor(8) as executor:
        invocations = list(executor.map(lambda _: pool["Echo"].invoke({"sleep": 0.2}), range(8)))
    assert [invocation.function_error for invocation in invocations] == [None] * 8
    assert len({invocation.request_id for invocation in invocations}) == 8


def test_a_port_in_use_is_refused_naming_the_variable_to_change(tmp_path: Path) -> None:
    """Given another program listening on the API's port, When the stack starts, Then it stops
    before starting anything, naming the variable to change."""
    with listen(0) as taken:
        port = bound_port(taken)
        environment = {"HERALD_MOTO_PORT": "0", "HERALD_API_PORT": str(port), "HERALD_SANDBOX_PORT": "0"}
        stack = LocalStack(LocalConfig.from_env({**environment, "HERALD_LOCAL_DIR": str(tmp_path)}))
        with pytest.raises(ConfigError, match=f"port {port} is already in use; set HERALD_API_PORT"):
            stack.start()
        stack.stop()
    assert stack.processes() == {}


def test_port_0_binds_a_free_port_and_the_configuration_carries_the_one_bound() -> None:
    config = LocalConfig.from_env(
        {"HERALD_MOTO_PORT": "0", "HERALD_API_PORT": "0", "HERALD_SANDBOX_PORT": "0"}
    )
    listeners = listen_on(config.ports())
    try:
        bound = config.with_ports(
            {variable: bound_port(listener) for variable, listener in listeners.items()}
        )
        ports = (bound.moto_port, bound.api_port, bound.sandbox_port)
        assert 0 not in ports
        assert len(set(ports)) == 3
        assert bound.gateway_url == f"http://127.0.0.1:{bound.api_port}"
        assert bound_port(listeners["HERALD_SANDBOX_PORT"]) == bound.sandbox_port
    finally:
        for listener in listeners.values():
            listener.close()


# ------------------------------------------------------------------ expressions


def test_rate_and_cron_expressions_fire_when_eventbridge_would() -> None:
    start = datetime(2026, 3, 6, 9, 59, 30, tzinfo=UTC)  # a Friday
    assert parse_expression("rate(5 minutes)", start).next_after(start) == datetime(
        2026, 3, 6, 10, 4, 30, tzinfo=UTC
    )
    weekdays = parse_expression("cron(15 10 ? * MON-FRI *)", start)
    assert weekdays.next_after(start) == datetime(2026, 3, 6, 10, 15, tzinfo=UTC)
    assert weekdays.next_after(datetime(2026, 3, 6, 10, 15, tzinfo=UTC)) == datetime(
        2026, 3, 9, 10, 15, tzinfo=UTC
    )
    monthly = parse_expression("cron(0 0 1 * ? *)", start)
    assert monthly.next_after(start) == datetime(2026, 4, 1, tzinfo=UTC)
    quarter_hours = parse_expression("cron(0/15 * * * ? *)", start)
    assert quarter_hours.next_after(start) == datetime(2026, 3, 6, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "expression", ["cron(0 0 L * ? *)", "cron(0 8 ? * 2#1 *)", "at(2026-01-01T00:00:00)"]
)
def test_schedule_expressions_not_played_locally_are_refused(expression: str) -> None:
    with pytest.raises(UnsupportedExpression):
        parse_expression(expression, datetime(2026, 1, 1, tzinfo=UTC))


def test_references_to_resources_outside_moto_become_expressions_moto_resolves() -> None:
    stand_ins = {"Fn": StandIn(ref="fn-name", attributes={"Arn": {"Fn::Sub": "arn:fn"}})}
    absent = frozenset({"Fn", "Role"})
    rewritten = with_stand_ins(
        {
            "A": {"Ref": "Fn"},
            "B": {"Fn::GetAtt": "Fn.Arn"},
            "C": {"Fn::Sub": "x-${Fn}-${Fn.Arn}-${Queue}-${AWS::Region}"},
        },
        stand_ins,
        absent,
    )
    text, variables = rewritten["C"]["Fn::Sub"]
    assert rewritten["A"] == "fn-name"
    assert rewritten["B"] == {"Fn::Sub": "arn:fn"}
    assert text.startswith("x-${HeraldLocalStandIn")
    assert text.endswith("-${Queue}-${AWS::Region}")
    assert sorted(map(str, variables.values())) == sorted(["fn-name", str({"Fn::Sub": "arn:fn"})])
    with pytest.raises(UnresolvableReference, match="Role.Arn"):
        with_stand_ins({"Fn::GetAtt": ["Role", "Arn"]}, stand_ins, absent)


def test_a_key_policy_becomes_a_json_string_with_its_intrinsics_kept() -> None:
    policy = {
        "Statement": [
            {"Principal": {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}}}
        ]
    }
    document = json_document(policy)
    assert json.loads(document["Fn::Sub"]) == {
        "Statement": [{"Principal": {"AWS": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}}]
    }
    assert json_document({"Version": "2012-10-17"}) == '{"Version": "2012-10-17"}'
