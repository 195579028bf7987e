"""template.yaml: it lints, and it keeps the settings the design depends on."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from herald.composition.workers import WEBHOOK_RECORD_BUDGET_MILLIS, email_record_budget_millis
from herald.domain.money import Money
from herald.domain.vendors import TENANT_PROVIDERS, VENDOR_REGIONS, ProviderName, webhook_route
from herald_local.cloudformation.template import load_template
from herald_local.config import project_root
from herald_local.event_sources.streams import matches
from tests.support.api_docs import documented_routes

ROOT = project_root()
TEMPLATE = ROOT / "template.yaml"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template(TEMPLATE)


def _resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: res for name, res in template["Resources"].items() if res["Type"] == kind}


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1", "SAM_CLI_TELEMETRY": "0"}
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_cfn_lint_passes() -> None:
    result = _run(str(BIN / "cfn-lint"), str(TEMPLATE))
    assert result.returncode == 0, result.stdout + result.stderr


def test_sam_validate_with_lint_passes() -> None:
    result = _run(str(BIN / "sam"), "validate", "--lint", "--template-file", str(TEMPLATE))
    assert result.returncode == 0, result.stdout + result.stderr


# Both billing modes, and SnapStart on and off: what `sam deploy --parameter-overrides` can choose.
VARIANTS = {
    "provisioned-without-snapstart": {"TableBillingMode": "PROVISIONED", "SnapStart": "None"},
    "on-demand-with-snapstart": {"TableBillingMode": "PAY_PER_REQUEST", "SnapStart": "PublishedVersions"},
}


def _with_defaults(template_text: str, defaults: dict[str, str]) -> str:
    """The template with these parameters' defaults, so SAM's own validation translates that variant."""
    for name, value in defaults.items():
        template_text, count = re.subn(
            rf"(\n  {name}:\n    Type: \w+\n    Default: )\S+", rf"\g<1>{value}", template_text
        )
        assert count == 1, name
    return template_text


@pytest.mark.parametrize("variant", VARIANTS, ids=list(VARIANTS))
def test_each_billing_mode_and_snapstart_setting_lints_and_validates(variant: str, tmp_path: Path) -> None:
    overrides = VARIANTS[variant]
    linted = _run(
        str(BIN / "cfn-lint"), str(TEMPLATE), "--parameters", *(f"{k}={v}" for k, v in overrides.items())
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr
    copy = tmp_path / "template.yaml"
    copy.write_text(_with_defaults(TEMPLATE.read_text(), overrides))
    validated = _run(str(BIN / "sam"), "validate", "--lint", "--template-file", str(copy))
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_the_request_path_functions_use_snapstart_through_an_alias_everything_invokes(
    template: dict[str, Any],
) -> None:
    functions = _resources(template, "AWS::Serverless::Function")
    snapped = {name for name, fn in functions.items() if "SnapStart" in fn["Properties"]}
    assert snapped == {"ApiFunction", "EmailWorkerFunction", "WebhookWorkerFunction"}
    for name in snapped:
        properties = functions[name]["Properties"]
        assert properties["SnapStart"] == {"ApplyOn": {"Ref": "SnapStart"}}
        assert properties["AutoPublishAlias"] == "live"
    assert template["Parameters"]["SnapStart"]["Default"] == "PublishedVersions"


def test_provisioned_capacity_scales_the_table_and_each_index_for_reads_and_writes(
    template: dict[str, Any],
) -> None:
    targets = _resources(template, "AWS::ApplicationAutoScaling::ScalableTarget")
    policies = _resources(template, "AWS::ApplicationAutoScaling::ScalingPolicy")
    dimensions = {
        (t["Properties"]["ResourceId"]["Fn::Sub"], t["Properties"]["ScalableDimension"])
        for t in targets.values()
    }
    indexes = [
        index["IndexName"]
        for index in template["Resources"]["HeraldTable"]["Properties"]["GlobalSecondaryIndexes"]
    ]
    resources = ["table/${HeraldTable}", *(f"table/${{HeraldTable}}/index/{index}" for index in indexes)]
    expected = {
        (resource, f"dynamodb:{'table' if resource.count('/') == 1 else 'index'}:{unit}CapacityUnits")
        for resource in resources
        for unit in ("Read", "Write")
    }
    assert dimensions == expected
    assert {p["Properties"]["ScalingTargetId"]["Ref"] for p in policies.values()} == set(targets)
    assert all(r["Condition"] == "IsTableProvisioned" for r in [*targets.values(), *policies.values()])


def test_every_route_of_the_api_guide_goes_to_the_api_function(template: dict[str, Any]) -> None:
    """Each route docs/api.md lists reaches ApiFunction: the ones the SDK calls (and the jobs export,
    beside them) by a route of their own, the others (account, templates, event types, events, subscriptions, portal links,
    documentation, the providers Herald supports) through the catch-all under /api/v1."""
    events = template["Resources"]["ApiFunction"]["Properties"]["Events"].values()
    served = {(event["Properties"]["Method"], event["Properties"]["Path"]) for event in events}
    documented = documented_routes()
    sdk_routes = {
        (method, path)
        for method, path in documented
        if not path.startswith(
            (
                "/api/v1/account",
                "/api/v1/templates",
                "/api/v1/event-types",
                "/api/v1/events",
                "/api/v1/subscriptions",
                "/api/v1/portal-links",
            )
        )
    }
    sdk_routes -= {("GET", "/api/v1/openapi.json"), ("GET", "/api/v1/docs"), ("GET", "/api/v1/providers")}
    assert len(sdk_routes) == 11
    assert sdk_routes <= served
    assert ("ANY", "/api/v1/{proxy+}") in served


def test_queue_visibility_is_six_times_the_worker_timeout_and_redrive_exceeds_the_attempts(
    template: dict[str, Any],
) -> None:
    queues = _resources(template, "AWS::SQS::Queue")
    max_attempts = int(template["Parameters"]["MaxAttempts"]["Default"])
    workers = {
        name: res
        for name, res in _resources(template, "AWS::Serverless::Function").items()
        if "Worker" in name
    }
    assert set(workers) == {"EmailWorkerFunction", "WebhookWorkerFunction"}
    budgets = {
        "EmailWorkerFunction": email_record_budget_millis(),
        "WebhookWorkerFunction": WEBHOOK_RECORD_BUDGET_MILLIS,
    }
    for name, worker in workers.items():
        timeout = int(worker["Properties"]["Timeout"])
        # A record started with its budget left ends, with its writes, before the function's timeout.
        assert timeout * 1000 >= budgets[name] + 10_000, name
        for event in worker["Properties"]["Events"].values():
            queue = queues[event["Properties"]["Queue"]["Fn::GetAtt"][0]]["Properties"]
            assert int(queue["VisibilityTimeout"]) >= 6 * timeout
            assert int(queue["RedrivePolicy"]["maxReceiveCount"]) > max_attempts
            assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_critical_gets_more_concurrency_than_normal_and_normal_more_than_low(
    template: dict[str, Any],
) -> None:
    defaults = {
        name: int(template["Parameters"][f"{name}MaxConcurrency"]["Default"])
        for name in ("Critical", "Normal", "Low")
    }
    assert defaults["Critical"] > defaults["Normal"] > defaults["Low"] >= 2


def test_no_function_may_reach_loopback_webhooks(template: dict[str, Any]) -> None:
    """Only the local stack sets the one loopback origin webhooks may reach; a deployed stack must never."""
    assert "HERALD_LOCAL_WEBHOOK_ORIGIN" not in TEMPLATE.read_text()


def test_the_table_is_on_demand_with_ttl_and_the_tenant_index(template: dict[str, Any]) -> None:
    table = template["Resources"]["HeraldTable"]["Properties"]
    assert table["BillingMode"] == {"Ref": "TableBillingMode"}
    assert template["Parameters"]["TableBillingMode"]["Default"] == "PAY_PER_REQUEST"
    assert table["TimeToLiveSpecification"] == {"AttributeName": "expiresAt", "Enabled": True}
    assert [index["IndexName"] for index in table["GlobalSecondaryIndexes"]] == [
        "gsi1",
        "gsi2",
        "gsi3",
        "gsi4",
    ]


def test_the_indexes_project_only_what_never_changes_and_the_models_say_the_same(
    template: dict[str, Any],
) -> None:
    """An index entry is rewritten whenever a projected attribute changes: both indexes project only
    attributes written once, so a status write never costs an index write (except gsi2's one entry,
    written with the outcome). The PynamoDB models must declare the template's projections."""
    from herald.adapters.store.models import (
        DUE_INDEX_ATTRIBUTES,
        ENDED_INDEX_ATTRIBUTES,
        FIND_INDEX_ATTRIBUTES,
        JOBS_INDEX_ATTRIBUTES,
    )

    projections = {
        index["IndexName"]: index["Projection"]
        for index in template["Resources"]["HeraldTable"]["Properties"]["GlobalSecondaryIndexes"]
    }
    assert projections["gsi1"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": JOBS_INDEX_ATTRIBUTES}
    assert projections["gsi2"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ENDED_INDEX_ATTRIBUTES}
    # gsi3 holds a scheduled job from acceptance to dispatch: written twice (put, removal), never updated.
    assert projections["gsi3"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": DUE_INDEX_ATTRIBUTES}
    # gsi4 (finding jobs by recipient or host) is written once, with the request item.
    assert projections["gsi4"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": FIND_INDEX_ATTRIBUTES}
    for written_once in (JOBS_INDEX_ATTRIBUTES, FIND_INDEX_ATTRIBUTES):
        assert "status" not in written_once
        assert "attempts" not in written_once


def test_the_dead_letter_queue_has_an_alarm(template: dict[str, Any]) -> None:
    alarm = template["Resources"]["DeadLetterQueueAlarm"]["Properties"]
    assert alarm["Dimensions"][0]["Value"] == {"Fn::GetAtt": ["DeadLetterQueue", "QueueName"]}
    assert alarm["Threshold"] == 0
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"


def vendor_function(name: ProviderName) -> str:
    """What template.yaml calls a vendor's webhook function: ``SendgridWebhookFunction``."""
    return f"{name.slug.capitalize()}WebhookFunction"


INBOUND_FUNCTIONS = {
    **{vendor_function(name): webhook_route(name) for name in TENANT_PROVIDERS},
    "PaystackWebhookFunction": "/api/v1/payments/paystack/webhook",
    "PolarWebhookFunction": "/api/v1/payments/polar/webhook",
}
PAYMENT_SECRETS = {
    "PaystackWebhookFunction": "PaystackSecretKeyParameter",
    "PolarWebhookFunction": "PolarWebhookSecretParameter",
}


def _statements(function: dict[str, Any]) -> list[dict[str, Any]]:
    return [statement for policy in function["Properties"]["Policies"] for statement in policy["Statement"]]


def test_each_inbound_sender_has_its_own_function_on_one_post_route_with_only_what_it_needs(
    template: dict[str, Any],
) -> None:
    functions = _resources(template, "AWS::Serverless::Function")
    for name, path in INBOUND_FUNCTIONS.items():
        function = functions[name]
        [route] = function["Properties"]["Events"].values()
        assert (route["Type"], route["Properties"]["Path"], route["Properties"]["Method"]) == (
            "HttpApi",
            path,
            "POST",
        )
        actions = {
            action
            for statement in _statements(function)
            for action in (
                [statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"]
            )
        }
        # No queue, no SES, no scans, no transactions: a webhook only reads and writes single items.
        assert not {action for action in actions if action.split(":")[0] in {"sqs", "ses"}}, name
        assert "dynamodb:Scan" not in actions
        assert ("ssm:GetParameter" in actions) is (name in PAYMENT_SECRETS), name
        # A payment function tells the operators about a refused payment, on the alert topic only.
        published = [
            statement["Resource"]
            for statement in _statements(function)
            if statement["Action"] == "sns:Publish"
        ]
        assert published == ([{"Ref": "AlertTopic"}] if name in PAYMENT_SECRETS else []), name


def test_each_vendor_of_the_provider_table_has_its_webhook_function_and_its_base_url_settings(
    template: dict[str, Any],
) -> None:
    functions = _resources(template, "AWS::Serverless::Function")
    served = {
        function["Properties"]["Environment"]["Variables"]["HERALD_WEBHOOK_PROVIDER"]: name
        for name, function in functions.items()
        if function["Properties"]["CodeUri"] == "functions/provider_webhook/"
    }
    assert served == {name.value: vendor_function(name) for name in TENANT_PROVIDERS}
    settings = template["Globals"]["Function"]["Environment"]["Variables"]
    for _, region in VENDOR_REGIONS:
        assert settings[region.setting] == {"Ref": region.base_url_parameter}
        assert template["Parameters"][region.base_url_parameter]["Default"].startswith("https://")


def test_a_payment_function_may_read_only_its_own_secret_and_decrypt_it_only_through_ssm(
    template: dict[str, Any],
) -> None:
    functions = _resources(template, "AWS::Serverless::Function")
    for name, parameter in PAYMENT_SECRETS.items():
        statements = _statements(functions[name])
        [read] = [statement for statement in statements if statement["Action"] == "ssm:GetParameter"]
        assert read["Resource"] == {
            "Fn::Sub": f"arn:${{AWS::Partition}}:ssm:${{AWS::Region}}:${{AWS::AccountId}}:parameter${{{parameter}}}"
        }
        [decrypt] = [statement for statement in statements if statement["Action"] == "kms:Decrypt"]
        condition = decrypt["Condition"]["StringEquals"]
        assert condition["kms:EncryptionContext:PARAMETER_ARN"] == read["Resource"]
        assert condition["kms:ViaService"] == {"Fn::Sub": "ssm.${AWS::Region}.${AWS::URLSuffix}"}
        other = next(other for other in PAYMENT_SECRETS.values() if other != parameter)
        assert other not in json.dumps(functions[name])


# Each processor's plan key parameter, and the parameter of that plan's price there.
PLAN_PRICES = {
    "PolarProductIndie": "PolarPriceIndie",
    "PolarProductStartup": "PolarPriceStartup",
    "PaystackPlanIndie": "PaystackPriceIndie",
    "PaystackPlanStartup": "PaystackPriceStartup",
}


def _not_empty(parameter: str) -> dict[str, Any]:
    return {"Fn::Not": [{"Fn::Equals": [{"Ref": parameter}, ""]}]}


def test_a_plan_sold_through_a_processor_cannot_be_deployed_without_its_price_there(
    template: dict[str, Any],
) -> None:
    rules = template["Rules"].values()
    for key, price in PLAN_PRICES.items():
        assert template["Parameters"][price]["Default"] == "", price
        [rule] = [rule for rule in rules if rule["RuleCondition"] == _not_empty(key)]
        assert [assertion["Assert"] for assertion in rule["Assertions"]] == [_not_empty(price)], key


@pytest.mark.parametrize(
    "written",
    ["500000 NGN", "2900 USD", "0 EUR", "", "5000.00 NGN", "500000 ngn", "500000", "NGN 500000", " 1 USD"],
)
def test_the_price_parameters_allow_exactly_what_the_functions_read(
    template: dict[str, Any], written: str
) -> None:
    for price in PLAN_PRICES.values():
        allowed = re.fullmatch(template["Parameters"][price]["AllowedPattern"], written) is not None
        try:
            read = Money.parse(written) if written else None
        except ValueError:
            assert not allowed, (price, written)
        else:
            assert allowed, (price, written, read)


# ---------------------------------------------------------------- operations


def _alarms(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: res["Properties"] for name, res in _resources(template, "AWS::CloudWatch::Alarm").items()}


def test_every_alarm_tells_the_alert_topic_when_it_goes_off_and_when_it_clears(
    template: dict[str, Any],
) -> None:
    alarms = _alarms(template)
    assert len(alarms) >= 12
    for name, alarm in alarms.items():
        assert alarm["AlarmActions"] == [{"Ref": "AlertTopic"}], name
        assert alarm["OKActions"] == [{"Ref": "AlertTopic"}], name
        assert alarm["TreatMissingData"] == "notBreaching", name


def test_each_work_queue_has_an_oldest_message_alarm_on_the_parameter(template: dict[str, Any]) -> None:
    watched = {
        alarm["Dimensions"][0]["Value"]["Fn::GetAtt"][0]
        for alarm in _alarms(template).values()
        if alarm["MetricName"] == "ApproximateAgeOfOldestMessage"
        and alarm["Threshold"] == {"Ref": "QueueAgeAlarmSeconds"}
    }
    dead_letters = {"DeadLetterQueue", "OrderedDeadLetterQueue"}
    work_queues = {name for name in _resources(template, "AWS::SQS::Queue") if name not in dead_letters}
    assert watched == work_queues
    # Above the longest delay a retry waits in its queue, so a healthy retry never sets it off.
    assert int(template["Parameters"]["QueueAgeAlarmSeconds"]["Default"]) > 900


def test_the_api_and_the_workers_errors_and_throttles_are_alarmed(template: dict[str, Any]) -> None:
    alarmed = {
        (alarm["Namespace"], alarm["MetricName"], json.dumps(alarm["Dimensions"][0]["Value"]))
        for alarm in _alarms(template).values()
    }
    assert ("AWS/ApiGateway", "5xx", json.dumps({"Ref": "HeraldHttpApi"})) in alarmed
    for worker in ("EmailWorkerFunction", "WebhookWorkerFunction"):
        for metric in ("Errors", "Throttles"):
            assert ("AWS/Lambda", metric, json.dumps({"Ref": worker})) in alarmed


def test_alert_function_listens_to_the_topic_and_reads_the_slack_url_parameter(
    template: dict[str, Any],
) -> None:
    alert = template["Resources"]["AlertFunction"]["Properties"]
    assert alert["Events"]["Alerts"] == {"Type": "SNS", "Properties": {"Topic": {"Ref": "AlertTopic"}}}
    variables = alert["Environment"]["Variables"]
    assert variables["HERALD_SLACK_WEBHOOK_PARAMETER"] == {"Ref": "SlackWebhookParameterName"}


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("", True),
        ("https://herald.example.com", True),
        ("https://herald.example.com:8443", True),
        ("http://127.0.0.1:3000", True),  # the local stack's
        ("http://herald.example.com", False),
        ("https://Herald.example.com", False),  # browsers send Origin in lower case: it would never match
        ("https://herald.example.com/", False),
        ("https://herald.example.com/console", False),
        ("https://herald.example.com@evil.example", False),
    ],
)
def test_the_public_origin_is_an_origin_a_browser_sends_or_empty(
    template: dict[str, Any], origin: str, allowed: bool
) -> None:
    assert bool(re.fullmatch(template["Parameters"]["PublicOrigin"]["AllowedPattern"], origin)) is allowed


def test_the_functions_that_write_links_for_people_get_the_public_origin(template: dict[str, Any]) -> None:
    given = {
        name
        for name, function in _resources(template, "AWS::Serverless::Function").items()
        if {"Ref": "PublicOrigin"}
        in function["Properties"].get("Environment", {}).get("Variables", {}).values()
    }
    assert given == {"ApiFunction", "ConsoleFunction"}


def test_the_sweeper_runs_every_five_minutes_with_a_window_that_outlasts_its_re_queues(
    template: dict[str, Any],
) -> None:
    from datetime import timedelta

    from herald.domain.sweeping import MAX_REQUEUES, checkpoints

    sweeper = template["Resources"]["SweeperFunction"]["Properties"]
    assert sweeper["Events"]["EveryFiveMinutes"]["Properties"]["Schedule"] == "rate(5 minutes)"
    stuck = int(template["Parameters"]["StuckJobSeconds"]["Default"])
    window = int(template["Parameters"]["SweepWindowHours"]["Default"]) * 3600
    visibility = {
        int(queue["Properties"].get("VisibilityTimeout", 30))
        for name, queue in _resources(template, "AWS::SQS::Queue").items()
        if name != "DeadLetterQueue"
    }
    # A crashed delivery comes back by itself after the visibility timeout: the sweeper waits longer.
    assert stuck > max(visibility)
    # A job is looked at often enough to be re-queued MAX_REQUEUES times and then failed.
    looks = checkpoints(timedelta(seconds=stuck), timedelta(seconds=window))
    assert len(looks) >= MAX_REQUEUES + 1


def test_the_dashboard_is_json_and_shows_every_queue_the_dlq_deliveries_and_latency(
    template: dict[str, Any],
) -> None:
    body = template["Resources"]["OperationsDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    dashboard = json.loads(re.sub(r"\$\{[^}]+\}", "X", body))
    titles = [widget["properties"].get("title") for widget in dashboard["widgets"]]
    for title in ("Queue depth (messages waiting)", "Dead-letter queue", "Accept to delivered (ms)"):
        assert title in titles
    for queue in _resources(template, "AWS::SQS::Queue"):
        assert "${" + queue + ".QueueName}" in body
    for metric in ("Delivered", "Failed", "DeadLettered", "FallbackUsed", "AcceptToDeliveredLatency"):
        assert f'MetricName=\\"{metric}\\"' in body


def test_the_tally_reads_only_status_writes_from_the_tables_stream(template: dict[str, Any]) -> None:
    """Its own day-count writes, the requests and an expiry never reach it (no loop, no cost)."""
    resources = template["Resources"]
    assert resources["HeraldTable"]["Properties"]["StreamSpecification"] == {
        "StreamViewType": "NEW_AND_OLD_IMAGES"
    }
    event = resources["TallyFunction"]["Properties"]["Events"]["StatusChanges"]
    assert event["Type"] == "DynamoDB"
    (criterion,) = event["Properties"]["FilterCriteria"]["Filters"]
    pattern = json.loads(criterion["Pattern"])

    def passes(event_name: str, sk: str) -> bool:
        return matches(
            pattern, {"eventName": event_name, "dynamodb": {"Keys": {"pk": {"S": "x"}, "sk": {"S": sk}}}}
        )

    assert passes("MODIFY", "STATUS")
    assert passes("INSERT", "STATUS")
    assert not passes("REMOVE", "STATUS")
    assert not any(passes("MODIFY", sk) for sk in ("DAY#2026-12-01", "PERIOD#20261201T000000", "JOB"))
    alarm = resources["TallyIteratorAgeAlarm"]["Properties"]
    assert (alarm["MetricName"], alarm["Dimensions"][0]["Value"]) == ("IteratorAge", {"Ref": "TallyFunction"})
