"""Creating the planned stack in moto and reading back everything it resolved."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from herald_local.cloudformation.deferred import UnresolvedExpression, fill
from herald_local.cloudformation.stack_plan import (
    DYNAMODB_TABLE,
    EMAIL_IDENTITY,
    HTTP_API,
    SUBSCRIPTION,
    StackPlan,
    execute_api_origin,
    local_api_id,
)

# moto builds every resource inside the CreateStack call itself, so even that one answer can take
# most of this (2 s on an idle machine, over 10 s while a test suite keeps both cores busy).
CREATE_TIMEOUT_SECONDS = 60.0


class StackCreationError(RuntimeError):
    """moto refused or failed the stack; the message carries moto's reasons."""


@dataclass(frozen=True)
class ResolvedResource:
    kind: str
    properties: dict[str, Any]
    translated: dict[str, Any]


@dataclass(frozen=True)
class ResolvedStack:
    outputs: dict[str, str]
    skipped_outputs: dict[str, str]
    played: dict[str, ResolvedResource]


def _failure_reasons(cloudformation: Any, stack_name: str) -> str:
    events = cloudformation.describe_stack_events(StackName=stack_name)["StackEvents"]
    reasons = [
        f"{event['LogicalResourceId']}: {event.get('ResourceStatusReason', '')}"
        for event in events
        if event.get("ResourceStatus", "").endswith("FAILED")
    ]
    return "; ".join(reasons) or "no reason given"


def create_stack(
    cloudformation: Any, stack_name: str, plan: StackPlan, parameters: Mapping[str, str]
) -> dict[str, str]:
    """Creates the stack and returns its Outputs (template and synthetic) by name."""
    try:
        cloudformation.create_stack(
            StackName=stack_name,
            TemplateBody=json.dumps(plan.moto_template),
            Parameters=[{"ParameterKey": key, "ParameterValue": value} for key, value in parameters.items()],
        )
    except (BotoCoreError, ClientError) as exc:
        # moto answers some resource errors with the resource service's body, which botocore cannot parse.
        raise StackCreationError(f"moto could not create stack {stack_name}: {exc}") from exc
    deadline = time.monotonic() + CREATE_TIMEOUT_SECONDS
    while True:
        stack = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
        status = str(stack["StackStatus"])
        if not status.endswith("IN_PROGRESS"):
            break
        if time.monotonic() > deadline:
            raise StackCreationError(
                f"stack {stack_name} still {status} after {CREATE_TIMEOUT_SECONDS:.0f} s"
            )
        time.sleep(0.1)
    if status != "CREATE_COMPLETE":
        raise StackCreationError(
            f"stack {stack_name} is {status}: {_failure_reasons(cloudformation, stack_name)}"
        )
    return {output["OutputKey"]: output["OutputValue"] for output in stack.get("Outputs", [])}


def local_origins(plan: StackPlan, region: str, gateway_url: str) -> dict[str, str]:
    """The execute-api origins of the template's HTTP APIs, each served locally by the gateway."""
    return {
        execute_api_origin(local_api_id(logical_id), region): gateway_url
        for logical_id, played in plan.played.items()
        if played.kind == HTTP_API
    }


def _rewrite(values: Mapping[str, str], origins: Mapping[str, str]) -> dict[str, str]:
    def local(value: str) -> str:
        for remote, replacement in origins.items():
            value = value.replace(remote, replacement)
        return value

    return {name: local(value) for name, value in values.items()}


def _enabled(flag: Any) -> bool:
    return flag is True or flag == "true"


def resolve(plan: StackPlan, values: Mapping[str, str], origins: Mapping[str, str]) -> ResolvedStack:
    local_values = _rewrite(values, origins)
    outputs: dict[str, str] = {}
    skipped = dict(plan.skipped_outputs)
    for name, tree in plan.outputs.items():
        try:
            outputs[name] = str(fill(tree, local_values, plan.expressions))
        except UnresolvedExpression as exc:
            # Outputs behind a false Condition are absent from the stack, as in CloudFormation.
            skipped[name] = str(exc)
    played = {
        logical_id: ResolvedResource(
            resource.kind, fill(resource.properties, local_values, plan.expressions), resource.translated
        )
        for logical_id, resource in plan.played.items()
        if _enabled(fill(resource.enabled, local_values, plan.expressions))
    }
    return ResolvedStack(outputs, skipped, played)


def apply_fixes(client: Callable[[str], Any], plan: StackPlan, values: Mapping[str, str]) -> None:
    """Creates through the service APIs what moto's CloudFormation skips (SES identities, SNS
    subscriptions) or drops (DynamoDB TTL); ``client`` makes a moto client for a service name."""
    for fix in plan.api_fixes:
        properties = fill(fix.properties, values, plan.expressions)
        if fix.kind == DYNAMODB_TABLE:
            specification = properties["TimeToLiveSpecification"]
            client("dynamodb").update_time_to_live(
                TableName=properties["TableName"],
                TimeToLiveSpecification={
                    "AttributeName": specification["AttributeName"],
                    "Enabled": _enabled(specification.get("Enabled")),
                },
            )
        elif fix.kind == EMAIL_IDENTITY:
            client("sesv2").create_email_identity(EmailIdentity=properties["EmailIdentity"])
        elif fix.kind == SUBSCRIPTION:
            attributes = {
                key: value if isinstance(value, str) else json.dumps(value)
                for key, value in properties.pop("Attributes").items()
            }
            client("sns").subscribe(**properties, Attributes=attributes, ReturnSubscriptionArn=True)
