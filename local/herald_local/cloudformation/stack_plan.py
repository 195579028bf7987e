"""Splits the translated template into what moto creates and what the local runtime plays itself.

moto creates the data-plane resources (tables, queues, topics, keys). Functions, their event
sources, HTTP APIs, schedules and alarms are played by the runtime: moto's CloudFormation skips or
mishandles them (an event source mapping without a container runtime fails every message into the
DLQ), so they are left out of the moto stack and only their properties are resolved through it.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Any

from herald_local.aws.regions import url_suffix
from herald_local.cloudformation.deferred import Deferred, ExpressionSet
from herald_local.cloudformation.intrinsics import (
    StandIn,
    UnresolvableReference,
    json_document,
    with_stand_ins,
)

FUNCTION = "AWS::Lambda::Function"
FUNCTION_VERSION = "AWS::Lambda::Version"
FUNCTION_ALIAS = "AWS::Lambda::Alias"
HTTP_API = "AWS::ApiGatewayV2::Api"
EVENT_SOURCE_MAPPING = "AWS::Lambda::EventSourceMapping"
EVENTS_RULE = "AWS::Events::Rule"
SCHEDULER_SCHEDULE = "AWS::Scheduler::Schedule"
ALARM = "AWS::CloudWatch::Alarm"
SUBSCRIPTION = "AWS::SNS::Subscription"
IAM_ROLE = "AWS::IAM::Role"
# What the local stack calls the one published version of each function.
LOCAL_VERSION = "1"

# Auto-scaling of provisioned capacity means nothing locally, and moto's CloudFormation lists its
# resources without a logical id.
_NOT_IN_MOTO_PREFIXES = (
    "AWS::ApplicationAutoScaling::",
    "AWS::Lambda::",
    "AWS::IAM::",
    "AWS::ApiGatewayV2::",
    "AWS::ApiGateway::",
    "AWS::Scheduler::",
)
EMAIL_IDENTITY = "AWS::SES::EmailIdentity"
DYNAMODB_TABLE = "AWS::DynamoDB::Table"
# moto's CloudFormation skips SES identities and SNS subscriptions; the runtime creates them through
# the service APIs instead (see ApiFix).
_NOT_IN_MOTO_TYPES = frozenset({ALARM, EVENTS_RULE, EMAIL_IDENTITY, SUBSCRIPTION})
_SUBSCRIPTION_ATTRIBUTES = ("FilterPolicy", "FilterPolicyScope", "RawMessageDelivery", "RedrivePolicy")

# The properties the runtime reads from each resource it plays (others, such as IAM roles, do not
# matter locally and may refer to resources that exist nowhere here).
PLAYED_PROPERTIES: dict[str, tuple[str, ...]] = {
    FUNCTION: ("FunctionName", "Handler", "Timeout", "MemorySize", "Environment"),
    HTTP_API: ("Body",),
    EVENT_SOURCE_MAPPING: (
        "FunctionName",
        "EventSourceArn",
        "BatchSize",
        "MaximumBatchingWindowInSeconds",
        "ScalingConfig",
        "FunctionResponseTypes",
        "Enabled",
        "StartingPosition",
        "FilterCriteria",
        "MaximumRetryAttempts",
    ),
    EVENTS_RULE: ("Name", "ScheduleExpression", "State", "Targets"),
    SCHEDULER_SCHEDULE: ("Name", "ScheduleExpression", "ScheduleExpressionTimezone", "State", "Target"),
    ALARM: (
        "AlarmName",
        "AlarmDescription",
        "Namespace",
        "MetricName",
        "Dimensions",
        "Statistic",
        "Period",
        "EvaluationPeriods",
        "DatapointsToAlarm",
        "Threshold",
        "ComparisonOperator",
        "TreatMissingData",
        "AlarmActions",
        "OKActions",
        "ActionsEnabled",
    ),
    SUBSCRIPTION: ("Endpoint", "TopicArn"),
    # Not enforced locally: the least-privilege check compares them with the calls functions make.
    IAM_ROLE: ("Policies",),
}


# Of a schedule's target, only what a Lambda target receives: the function and the constant input.
_PLAYED_TARGET_KEYS = ("Arn", "Input")


def _target(target: Any) -> Any:
    return (
        {key: target[key] for key in _PLAYED_TARGET_KEYS if key in target}
        if isinstance(target, dict)
        else target
    )


def _wanted_properties(kind: str, properties: dict[str, Any]) -> dict[str, Any]:
    wanted = {name: properties[name] for name in PLAYED_PROPERTIES.get(kind, ()) if name in properties}
    if "Target" in wanted:
        wanted["Target"] = _target(wanted["Target"])
    if isinstance(wanted.get("Targets"), list):
        wanted["Targets"] = [_target(target) for target in wanted["Targets"]]
    return wanted


class PlanError(RuntimeError):
    """The template holds something the local stack cannot create."""


def _in_moto(resource: dict[str, Any]) -> bool:
    kind = str(resource.get("Type", ""))
    return kind not in _NOT_IN_MOTO_TYPES and not kind.startswith(_NOT_IN_MOTO_PREFIXES)


def local_api_id(logical_id: str) -> str:
    """A stable, real-looking (10 lower-case alphanumerics) id for an HTTP API of the template."""
    return hashlib.sha256(logical_id.encode()).hexdigest()[:10]


def execute_api_origin(api_id: str, region: str) -> str:
    return f"https://{api_id}.execute-api.{region}.{url_suffix(region)}"


def _stand_ins(resources: dict[str, Any], region: str) -> dict[str, StandIn]:
    stand_ins: dict[str, StandIn] = {}
    for logical_id, resource in resources.items():
        if resource.get("Type") == FUNCTION:
            name = (resource.get("Properties") or {}).get("FunctionName", logical_id)
            arn = {
                "Fn::Sub": [
                    "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${Name}",
                    {"Name": name},
                ]
            }
            stand_ins[logical_id] = StandIn(ref=name, attributes={"Arn": arn})
        elif resource.get("Type") == HTTP_API:
            api_id = local_api_id(logical_id)
            stand_ins[logical_id] = StandIn(
                ref=api_id, attributes={"ApiEndpoint": execute_api_origin(api_id, region)}
            )
    # Published versions and aliases (AutoPublishAlias, SnapStart) stand for their function: the
    # local runtime invokes the function itself, and reads the function's name out of the ARN.
    for logical_id, resource in resources.items():
        if resource.get("Type") in (FUNCTION_VERSION, FUNCTION_ALIAS):
            stand_ins[logical_id] = _qualified(resource, stand_ins)
    return stand_ins


def _qualified(resource: dict[str, Any], stand_ins: dict[str, StandIn]) -> StandIn:
    properties = resource.get("Properties") or {}
    function = properties.get("FunctionName")
    target = function.get("Ref") if isinstance(function, dict) else None
    if target not in stand_ins:
        raise PlanError(f"a version or alias of {function!r}, which is no function of this template")
    qualifier = (
        properties.get("Name", LOCAL_VERSION) if resource.get("Type") == FUNCTION_ALIAS else LOCAL_VERSION
    )
    arn = {
        "Fn::Sub": [
            "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${Name}:${Qualifier}",
            {"Name": stand_ins[target].ref, "Qualifier": qualifier},
        ]
    }
    return StandIn(ref=arn, attributes={"Version": LOCAL_VERSION, "FunctionArn": arn})


@dataclass(frozen=True)
class ApiFix:
    kind: str  # the resource type
    logical_id: str
    properties: dict[str, Any]  # with Deferred values


@dataclass
class PlayedResource:
    kind: str
    properties: dict[str, Any]  # with Deferred values
    enabled: Deferred | bool
    translated: dict[str, Any]  # the untouched translated resource, for structural reads (Code, Layers)


@dataclass
class StackPlan:
    moto_template: dict[str, Any]
    expressions: ExpressionSet
    played: dict[str, PlayedResource]
    outputs: dict[str, Any]
    skipped_outputs: dict[str, str] = field(default_factory=dict)
    # What moto's CloudFormation skips or drops, to create through the service APIs afterwards.
    api_fixes: list[ApiFix] = field(default_factory=list)


class _Planner:
    def __init__(self, translated: dict[str, Any], region: str, sns_bridge_url: str | None) -> None:
        self.named_outputs: dict[str, Any] = {}
        self.translated = translated
        self.resources: dict[str, Any] = translated["Resources"]
        self.absent = frozenset(k for k, r in self.resources.items() if not _in_moto(r))
        self.stand_ins = _stand_ins(self.resources, region)
        self.sns_bridge_url = sns_bridge_url
        self.expressions = ExpressionSet()

    def rewrite(self, where: str, node: Any) -> Any:
        try:
            return with_stand_ins(node, self.stand_ins, self.absent)
        except UnresolvableReference as exc:
            raise PlanError(f"{where} {exc}") from exc

    def played(self, logical_id: str, resource: dict[str, Any]) -> PlayedResource:
        kind = str(resource["Type"])
        wanted = _wanted_properties(kind, resource.get("Properties") or {})
        condition = resource.get("Condition")
        enabled: Deferred | bool = True
        if condition:
            enabled = self.expressions.add({"Fn::If": [condition, "true", "false"]})
        deferred = self.expressions.defer(self.rewrite(logical_id, wanted))
        return PlayedResource(kind, deferred, enabled, resource)

    def moto_resource(self, logical_id: str, resource: dict[str, Any]) -> dict[str, Any]:
        copied = self.rewrite(logical_id, copy.deepcopy(resource))
        properties = copied.get("Properties") or {}
        if copied["Type"] == "AWS::KMS::Key" and isinstance(properties.get("KeyPolicy"), dict):
            # moto stores an object policy as-is and DescribeKey then fails with HTTP 500.
            properties["KeyPolicy"] = json_document(properties["KeyPolicy"])
        return dict(copied)

    def subscription(self, logical_id: str, properties: dict[str, Any]) -> dict[str, Any]:
        """A subscription as moto gets it: a function's becomes an HTTP one to the SNS bridge."""
        wanted: dict[str, Any] = {
            k: properties[k] for k in ("TopicArn", "Protocol", "Endpoint") if k in properties
        }
        wanted["Attributes"] = {key: properties[key] for key in _SUBSCRIPTION_ATTRIBUTES if key in properties}
        if properties.get("Protocol") == "lambda":
            if self.sns_bridge_url is None:
                raise PlanError(f"{logical_id} needs the SNS bridge, which is not running")
            wanted["Protocol"] = "http"
            wanted["Endpoint"] = f"{self.sns_bridge_url}/{logical_id}"
        return wanted

    def api_fix(self, logical_id: str, resource: dict[str, Any]) -> ApiFix | None:
        properties = resource.get("Properties") or {}
        if resource.get("Type") == DYNAMODB_TABLE and properties.get("TimeToLiveSpecification"):
            wanted = {
                "TableName": {"Ref": logical_id},
                "TimeToLiveSpecification": properties["TimeToLiveSpecification"],
            }
        elif resource.get("Type") == EMAIL_IDENTITY:
            wanted = {"EmailIdentity": properties["EmailIdentity"]}
        elif resource.get("Type") == SUBSCRIPTION:
            wanted = self.subscription(logical_id, properties)
        else:
            return None
        deferred = self.expressions.defer(self.rewrite(logical_id, wanted))
        return ApiFix(str(resource["Type"]), logical_id, deferred)

    def template_outputs(self, plan: StackPlan) -> None:
        for name, output in (self.translated.get("Outputs") or {}).items():
            try:
                value = with_stand_ins(output.get("Value"), self.stand_ins, self.absent)
            except UnresolvableReference as exc:
                plan.skipped_outputs[name] = str(exc)
                continue
            plan.outputs[name] = self.expressions.defer(value)
            # Also under its own name, so the moto stack answers DescribeStacks like a deployed one
            # (the operator CLI's --stack reads TableName there).
            self.named_outputs[name] = {"Value": value}

    def plan(self) -> StackPlan:
        moto_resources: dict[str, Any] = {}
        played: dict[str, PlayedResource] = {}
        fixes: list[ApiFix] = []
        for logical_id, resource in self.resources.items():
            if resource.get("Type") in PLAYED_PROPERTIES:
                played[logical_id] = self.played(logical_id, resource)
            if logical_id not in self.absent:
                moto_resources[logical_id] = self.moto_resource(logical_id, resource)
            fix = self.api_fix(logical_id, resource)
            if fix is not None:
                fixes.append(fix)
        plan = StackPlan({}, self.expressions, played, {}, api_fixes=fixes)
        self.template_outputs(plan)
        sections = {
            name: self.translated[name]
            for name in ("Parameters", "Conditions", "Mappings")
            if self.translated.get(name)
        }
        plan.moto_template = {
            "AWSTemplateFormatVersion": "2010-09-09",
            **sections,
            "Resources": moto_resources,
            "Outputs": {**self.expressions.outputs(), **self.named_outputs},
        }
        return plan


def plan_stack(translated: dict[str, Any], region: str, sns_bridge_url: str | None = None) -> StackPlan:
    return _Planner(translated, region, sns_bridge_url).plan()


def needs_sns_bridge(translated: dict[str, Any]) -> bool:
    return any(
        resource.get("Type") == SUBSCRIPTION
        and (resource.get("Properties") or {}).get("Protocol") == "lambda"
        for resource in translated["Resources"].values()
    )
