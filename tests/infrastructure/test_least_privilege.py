"""The least-privilege check itself: how a recorded call becomes the action and resource IAM checks,
and how the template's policies are evaluated against it. The check runs at the end of every test
run (tests/support/least_privilege.py); these tests pin what it decides, on the real template."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from herald_harness.in_moto import template_in_moto
from herald_local.aws.function_calls import AwsCall, Fault, resources
from herald_local.config import ACCOUNT_ID
from tests.support.iam_policy import Grant, UnsupportedPolicy, allows, unused_grants
from tests.support.least_privilege import check

REGION = "us-east-1"
TABLE = f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/herald-local"
DLQ = f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:herald-local-dlq"
QUEUES = [
    f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:herald-local-{name}" for name in ("email-normal", "webhook-low")
]

# ApiFunction's queue statement before GET /health was checked: no dead-letter queue in it.
PREVIOUS_API_QUEUE_STATEMENT = {
    "Effect": "Allow",
    "Action": ["sqs:SendMessage", "sqs:GetQueueAttributes"],
    "Resource": [
        f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:herald-local-{channel}-{priority}"
        for channel in ("email", "webhook")
        for priority in ("critical", "normal", "low")
    ],
}


@pytest.fixture(scope="module")
def permissions() -> Iterator[dict[str, tuple[dict[str, Any], ...]]]:
    with pytest.MonkeyPatch.context() as monkeypatch, template_in_moto(monkeypatch) as topology:
        yield dict(topology.permissions)


def health_calls() -> list[AwsCall]:
    """What GET /health makes ApiFunction do: describe the table, read every queue's attributes."""
    return [AwsCall("ApiFunction", "dynamodb:DescribeTable", TABLE)] + [
        AwsCall("ApiFunction", "sqs:GetQueueAttributes", queue) for queue in [*QUEUES, DLQ]
    ]


def test_the_check_catches_the_health_route_on_the_previous_policy_and_passes_on_the_current(
    permissions: dict[str, tuple[dict[str, Any], ...]],
) -> None:
    current = permissions["ApiFunction"]
    without_queues = [statement for statement in current if "sqs:" not in json.dumps(statement["Action"])]
    previous = [*without_queues, PREVIOUS_API_QUEUE_STATEMENT]

    refused_before, _ = check(health_calls(), {"ApiFunction": previous})
    refused_now, _ = check(health_calls(), {"ApiFunction": current})

    assert refused_before == [AwsCall("ApiFunction", "sqs:GetQueueAttributes", DLQ)]
    assert refused_now == []


def test_each_function_is_held_to_its_own_policy(permissions: dict[str, tuple[dict[str, Any], ...]]) -> None:
    """The webhook worker may not send email through SES, nor read the Slack URL; the sweeper may not
    scan or query the table outside its two indexes."""
    refused, _ = check(
        [
            AwsCall(
                "WebhookWorkerFunction",
                "ses:SendEmail",
                f"arn:aws:ses:{REGION}:{ACCOUNT_ID}:identity/herald.example",
            ),
            AwsCall(
                "WebhookWorkerFunction",
                "ssm:GetParameter",
                f"arn:aws:ssm:{REGION}:{ACCOUNT_ID}:parameter/herald/local/slack-webhook-url",
            ),
            AwsCall("SweeperFunction", "dynamodb:Scan", TABLE),
            AwsCall("SweeperFunction", "dynamodb:Query", TABLE),
            AwsCall("SweeperFunction", "dynamodb:Query", f"{TABLE}/index/gsi2"),
            AwsCall(
                "AlertFunction",
                "ssm:GetParameter",
                f"arn:aws:ssm:{REGION}:{ACCOUNT_ID}:parameter/herald/local/slack-webhook-url",
            ),
        ],
        permissions,
    )

    assert [(call.function, call.action, call.resource.rsplit(":", 1)[-1]) for call in refused] == [
        ("SweeperFunction", "dynamodb:Query", "table/herald-local"),
        # It reads no failed-jobs index (its slices' status items tell it everything).
        ("SweeperFunction", "dynamodb:Query", "table/herald-local/index/gsi2"),
        ("SweeperFunction", "dynamodb:Scan", "table/herald-local"),
        ("WebhookWorkerFunction", "ses:SendEmail", "identity/herald.example"),
        ("WebhookWorkerFunction", "ssm:GetParameter", "parameter/herald/local/slack-webhook-url"),
    ]


def test_the_platform_sender_condition_of_ses_is_evaluated(
    permissions: dict[str, tuple[dict[str, Any], ...]],
) -> None:
    identity = f"arn:aws:ses:{REGION}:{ACCOUNT_ID}:identity/herald.example"
    statements = permissions["EmailWorkerFunction"]

    assert allows(
        statements,
        AwsCall(
            "EmailWorkerFunction",
            "ses:SendEmail",
            identity,
            (("ses:FromAddress", "notifications@herald.example"),),
        ),
    )
    assert not allows(
        statements,
        AwsCall(
            "EmailWorkerFunction", "ses:SendEmail", identity, (("ses:FromAddress", "ceo@herald.example"),)
        ),
    )
    assert not allows(statements, AwsCall("EmailWorkerFunction", "ses:SendEmail", identity))


def test_grants_no_call_used_are_listed() -> None:
    statements = [{"Effect": "Allow", "Action": ["sqs:SendMessage", "sqs:DeleteMessage"], "Resource": QUEUES}]
    calls = [AwsCall("F", "sqs:SendMessage", QUEUES[0])]

    assert unused_grants("F", statements, calls) == [
        Grant("F", "sqs:SendMessage", QUEUES[1]),
        Grant("F", "sqs:DeleteMessage", QUEUES[0]),
        Grant("F", "sqs:DeleteMessage", QUEUES[1]),
    ]


def test_grammar_the_evaluator_does_not_know_is_refused_rather_than_guessed() -> None:
    with pytest.raises(UnsupportedPolicy):
        allows(
            [{"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"}], AwsCall("F", "sqs:SendMessage", "*")
        )
    with pytest.raises(UnsupportedPolicy):
        allows(
            [
                {
                    "Effect": "Allow",
                    "Action": "*",
                    "Resource": "*",
                    "Condition": {"IpAddress": {"aws:SourceIp": "1.2.3.4"}},
                }
            ],
            AwsCall("F", "sqs:SendMessage", "*"),
        )


# ---------------------------------------------------------------- from a call to what IAM checks


def test_a_transaction_is_checked_as_its_parts_and_a_query_of_an_index_as_the_index() -> None:
    transaction = {
        "TransactItems": [
            {"Put": {"TableName": "herald-local", "Item": {}}},
            {"Update": {"TableName": "herald-local", "Key": {}}},
            {"ConditionCheck": {"TableName": "herald-local", "Key": {}}},
        ]
    }

    assert resources("dynamodb", "TransactWriteItems", transaction, None, REGION) == [
        ("PutItem", TABLE),
        ("UpdateItem", TABLE),
        ("ConditionCheckItem", TABLE),
    ]
    assert resources(
        "dynamodb", "Query", {"TableName": "herald-local", "IndexName": "gsi1"}, None, REGION
    ) == [("Query", f"{TABLE}/index/gsi1")]
    assert resources("dynamodb", "BatchGetItem", {"RequestItems": {"herald-local": {}}}, None, REGION) == [
        ("BatchGetItem", TABLE)
    ]


def test_queues_parameters_and_keys_are_named_by_their_arns() -> None:
    queue_url = f"http://127.0.0.1:5000/{ACCOUNT_ID}/herald-local-dlq"
    key = f"arn:aws:kms:{REGION}:{ACCOUNT_ID}:key/1234abcd-12ab-34cd-56ef-1234567890ab"

    assert resources("sqs", "GetQueueAttributes", {"QueueUrl": queue_url}, None, REGION) == [
        ("GetQueueAttributes", DLQ)
    ]
    # IAM has no batch actions: a batch is allowed by its entries' action.
    assert resources("sqs", "SendMessageBatch", {"QueueUrl": queue_url}, None, REGION) == [
        ("SendMessage", DLQ)
    ]
    assert resources("ssm", "GetParameter", {"Name": "/herald/slack"}, None, REGION) == [
        ("GetParameter", f"arn:aws:ssm:{REGION}:{ACCOUNT_ID}:parameter/herald/slack")
    ]
    # Decrypt names no key: the answer says which one the ciphertext needed.
    assert resources("kms", "Decrypt", {"CiphertextBlob": b"x"}, {"KeyId": key}, REGION) == [("Decrypt", key)]


def test_a_batch_of_messages_is_authorised_as_its_single_message_action(
    permissions: dict[str, tuple[dict[str, Any], ...]],
) -> None:
    """IAM has no sqs:SendMessageBatch: sqs:SendMessage grants the batch too (likewise for delete
    and visibility), so a function that sends batches needs no other grant."""
    queue_url = f"http://127.0.0.1:5000/{ACCOUNT_ID}/herald-local-webhook-normal"
    for batch, single in [
        ("SendMessageBatch", "SendMessage"),
        ("DeleteMessageBatch", "DeleteMessage"),
        ("ChangeMessageVisibilityBatch", "ChangeMessageVisibility"),
    ]:
        assert resources("sqs", batch, {"QueueUrl": queue_url}, None, REGION) == [
            (single, f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:herald-local-webhook-normal")
        ]
    [(action, queue)] = resources("sqs", "SendMessageBatch", {"QueueUrl": queue_url}, None, REGION)
    assert allows(permissions["FanoutFunction"], AwsCall("FanoutFunction", f"sqs:{action}", queue))


def test_a_fault_hits_only_its_function_action_and_matching_calls() -> None:
    fault = Fault("dynamodb:UpdateItem", "ApiFunction", '"STATUS"')
    status_write = {"Key": {"pk": {"S": "JOB#t#j"}, "sk": {"S": "STATUS"}}}
    counter_write = {"Key": {"pk": {"S": "USAGE#t#p"}, "sk": {"S": "USAGE"}}}

    assert fault.hits("ApiFunction", "dynamodb:UpdateItem", status_write)
    assert not fault.hits("ApiFunction", "dynamodb:UpdateItem", counter_write)
    assert not fault.hits("EmailWorkerFunction", "dynamodb:UpdateItem", status_write)
    assert not fault.hits("ApiFunction", "dynamodb:PutItem", status_write)


def test_ses_tenant_calls_are_checked_on_the_tenant_and_the_associated_identity(
    permissions: dict[str, tuple[dict[str, Any], ...]],
) -> None:
    """Sign-up (the console) and a late first send (the email worker) set SES tenants up; the API only
    reads them; no function may touch an SES tenant that is not one of Herald's."""
    tenant = f"arn:aws:ses:{REGION}:{ACCOUNT_ID}:tenant/herald-t1/tn-1"
    params = {
        "TenantName": "herald-t1",
        "ResourceArn": f"arn:aws:ses:{REGION}:{ACCOUNT_ID}:identity/herald.example",
    }
    association = resources("ses", "CreateTenantResourceAssociation", params, None, REGION)
    policy = resources(
        "ses", "UpdateReputationEntityPolicy", {"ReputationEntityReference": tenant}, None, REGION
    )
    calls = [
        AwsCall(function, f"ses:{action}", resource)
        for function in ("ConsoleFunction", "EmailWorkerFunction")
        for action, resource in [*association, *policy]
    ]
    read_by_api = AwsCall(
        "ApiFunction", "ses:GetTenant", f"arn:aws:ses:{REGION}:{ACCOUNT_ID}:tenant/herald-t1"
    )
    foreign = AwsCall(
        "EmailWorkerFunction", "ses:CreateTenant", f"arn:aws:ses:{REGION}:{ACCOUNT_ID}:tenant/other"
    )
    set_up_by_api = AwsCall(
        "ApiFunction", "ses:CreateTenant", f"arn:aws:ses:{REGION}:{ACCOUNT_ID}:tenant/herald-t1"
    )

    refused, _ = check([*calls, read_by_api, foreign, set_up_by_api], permissions)

    assert [resource for _, resource in association] == [
        f"arn:aws:ses:{REGION}:{ACCOUNT_ID}:tenant/herald-t1",
        f"arn:aws:ses:{REGION}:{ACCOUNT_ID}:identity/herald.example",
    ]
    assert sorted(refused, key=str) == sorted([set_up_by_api, foreign], key=str)
