"""What the template declares, resolved: functions, HTTP routes, queue and stream event sources,
schedules, alarms and SNS subscriptions. Everything here is read from the template; nothing is named by hand."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from herald_local.aws.regions import partition_name
from herald_local.cloudformation.moto_stack import ResolvedResource, ResolvedStack
from herald_local.cloudformation.stack_plan import (
    ALARM,
    EVENT_SOURCE_MAPPING,
    EVENTS_RULE,
    FUNCTION,
    HTTP_API,
    IAM_ROLE,
    SCHEDULER_SCHEDULE,
    SUBSCRIPTION,
    local_api_id,
)
from herald_local.cloudformation.template import local_folder
from herald_local.config import ACCOUNT_ID

log = logging.getLogger(__name__)

# Lambda's own defaults when the template leaves a setting out.
DEFAULT_TIMEOUT_SECONDS = 3
DEFAULT_MEMORY_MB = 128
DEFAULT_SQS_BATCH_SIZE = 10
# Lambda starts five concurrent batches per SQS event source and scales up from there; without a
# MaximumConcurrency the local poller stays at that starting point.
DEFAULT_SQS_CONCURRENCY = 5
DEFAULT_STREAM_BATCH_SIZE = 100
# -1: a failed batch is retried until it succeeds (or its records expire from the stream).
DEFAULT_STREAM_RETRIES = -1
DEFAULT_INTEGRATION_TIMEOUT_MS = 30_000
_ANY_METHOD = "x-amazon-apigateway-any-method"
_HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch"})


def _env_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    name: str
    handler: str
    code_dir: str
    layer_dirs: tuple[str, ...]
    timeout_seconds: int
    memory_mb: int
    environment: dict[str, str]
    arn: str
    # ReservedConcurrentExecutions: at most this many environments at once (None: not reserved).
    reserved_concurrency: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FunctionSpec:
        return cls(**{**data, "layer_dirs": tuple(data["layer_dirs"])})


@dataclass(frozen=True)
class RouteSpec:
    api_id: str
    method: str  # upper case, or ANY
    path: str
    function: str  # logical id
    timeout_seconds: float

    @property
    def route_key(self) -> str:
        return self.path if self.path == "$default" else f"{self.method} {self.path}"


@dataclass(frozen=True)
class QueueSourceSpec:
    logical_id: str
    function: str
    queue_arn: str
    batch_size: int
    batching_window_seconds: int
    max_concurrency: int
    report_batch_item_failures: bool

    @property
    def queue_name(self) -> str:
        return self.queue_arn.rsplit(":", 1)[-1]


@dataclass(frozen=True)
class StreamSourceSpec:
    """A DynamoDB stream event source: batches of its records that pass ``filters`` (the event
    source's FilterCriteria patterns; none: every record)."""

    logical_id: str
    function: str
    stream_arn: str
    batch_size: int
    batching_window_seconds: int
    starting_position: str
    filters: tuple[dict[str, Any], ...]
    max_retry_attempts: int


@dataclass(frozen=True)
class ScheduleSpec:
    logical_id: str
    function: str
    expression: str
    timezone: str
    arn: str
    # EventBridge rules send the scheduled event unless the target sets Input; Scheduler sends Input.
    input: str | None
    sends_event: bool


@dataclass(frozen=True)
class AlarmSpec:
    logical_id: str
    name: str
    arn: str
    description: str
    namespace: str
    metric_name: str
    dimensions: tuple[tuple[str, str], ...]
    statistic: str
    period_seconds: int
    evaluation_periods: int
    datapoints_to_alarm: int
    threshold: float
    comparison: str
    treat_missing_data: str
    alarm_actions: tuple[str, ...]
    ok_actions: tuple[str, ...]


@dataclass(frozen=True)
class SubscriptionSpec:
    logical_id: str
    function: str
    topic_arn: str


@dataclass
class Topology:
    region: str
    functions: dict[str, FunctionSpec] = field(default_factory=dict)
    routes: list[RouteSpec] = field(default_factory=list)
    queue_sources: list[QueueSourceSpec] = field(default_factory=list)
    stream_sources: list[StreamSourceSpec] = field(default_factory=list)
    schedules: list[ScheduleSpec] = field(default_factory=list)
    alarms: list[AlarmSpec] = field(default_factory=list)
    subscriptions: list[SubscriptionSpec] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    # Per function: the statements of its execution role's inline policies, resolved (not enforced
    # locally; the least-privilege check compares them with the calls the function makes).
    permissions: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)

    def function_for(self, reference: str) -> str | None:
        """The logical id of the function a name or (possibly qualified) ARN designates."""
        name = reference.split(":")[6] if reference.startswith("arn:") else reference
        return next((spec.logical_id for spec in self.functions.values() if spec.name == name), None)


def _layer_dirs(
    logical_id: str, resource: ResolvedResource, translated: dict[str, Any], root: Path
) -> list[str]:
    folders = []
    for layer in resource.translated.get("Properties", {}).get("Layers", []):
        layer_id = layer.get("Ref") if isinstance(layer, dict) else None
        layer_resource = translated["Resources"].get(layer_id) if layer_id else None
        if layer_resource is None:
            log.warning(
                "%s: layer %s is not a layer of this template; it is not mounted locally", logical_id, layer
            )
            continue
        folders.append(str(local_folder(layer_resource["Properties"]["Content"], root)))
    return folders


def _function(
    logical_id: str, resource: ResolvedResource, translated: dict[str, Any], root: Path, region: str
) -> FunctionSpec:
    properties = resource.properties
    name = str(properties.get("FunctionName", logical_id))
    variables = (properties.get("Environment") or {}).get("Variables") or {}
    reserved = properties.get("ReservedConcurrentExecutions")
    return FunctionSpec(
        logical_id=logical_id,
        name=name,
        handler=str(properties["Handler"]),
        code_dir=str(local_folder(resource.translated["Properties"]["Code"], root)),
        layer_dirs=tuple(_layer_dirs(logical_id, resource, translated, root)),
        timeout_seconds=int(properties.get("Timeout", DEFAULT_TIMEOUT_SECONDS)),
        memory_mb=int(properties.get("MemorySize", DEFAULT_MEMORY_MB)),
        environment={key: _env_value(value) for key, value in variables.items()},
        arn=f"arn:{partition_name(region)}:lambda:{region}:{ACCOUNT_ID}:function:{name}",
        reserved_concurrency=None if reserved is None else int(reserved),
    )


def _integration_function(integration: dict[str, Any]) -> str:
    uri = str(integration.get("uri", ""))
    return uri.split("/functions/", 1)[-1].removesuffix("/invocations")


def _routes(topology: Topology, logical_id: str, resource: ResolvedResource) -> None:
    api_id = local_api_id(logical_id)
    for path, operations in ((resource.properties.get("Body") or {}).get("paths") or {}).items():
        for key, operation in operations.items():
            if key != _ANY_METHOD and key not in _HTTP_METHODS:
                continue
            integration = operation.get("x-amazon-apigateway-integration") or {}
            method = "ANY" if key == _ANY_METHOD else key.upper()
            function = topology.function_for(_integration_function(integration))
            if integration.get("type") != "aws_proxy" or function is None:
                log.warning(
                    "%s %s %s: not a Lambda proxy integration; not served locally", logical_id, method, path
                )
                continue
            if str(integration.get("payloadFormatVersion")) != "2.0":
                log.warning("%s %s %s: only payload format 2.0 is served locally", logical_id, method, path)
                continue
            timeout_ms = int(integration.get("timeoutInMillis", DEFAULT_INTEGRATION_TIMEOUT_MS))
            topology.routes.append(RouteSpec(api_id, method, path, function, timeout_ms / 1000))


def _event_source(topology: Topology, logical_id: str, properties: dict[str, Any]) -> None:
    source = str(properties.get("EventSourceArn", ""))
    function = topology.function_for(str(properties.get("FunctionName", "")))
    kind = (
        "sqs" if ":sqs:" in source else "stream" if ":dynamodb:" in source and "/stream/" in source else None
    )
    if kind is None or function is None:
        log.warning(
            "%s: only SQS and DynamoDB stream event sources of template functions are played locally",
            logical_id,
        )
        return
    if str(properties.get("Enabled", "true")).lower() == "false":
        return
    if kind == "sqs":
        _queue_source(topology, logical_id, function, properties)
    else:
        _stream_source(topology, logical_id, function, properties)


def _stream_source(topology: Topology, logical_id: str, function: str, properties: dict[str, Any]) -> None:
    filters = ((properties.get("FilterCriteria") or {}).get("Filters")) or []
    topology.stream_sources.append(
        StreamSourceSpec(
            logical_id=logical_id,
            function=function,
            stream_arn=str(properties["EventSourceArn"]),
            batch_size=int(properties.get("BatchSize", DEFAULT_STREAM_BATCH_SIZE)),
            batching_window_seconds=int(properties.get("MaximumBatchingWindowInSeconds", 0)),
            starting_position=str(properties.get("StartingPosition", "LATEST")),
            filters=tuple(json.loads(str(each["Pattern"])) for each in filters),
            max_retry_attempts=int(properties.get("MaximumRetryAttempts", DEFAULT_STREAM_RETRIES)),
        )
    )


def _queue_source(topology: Topology, logical_id: str, function: str, properties: dict[str, Any]) -> None:
    source = str(properties.get("EventSourceArn", ""))
    scaling = properties.get("ScalingConfig") or {}
    topology.queue_sources.append(
        QueueSourceSpec(
            logical_id=logical_id,
            function=function,
            queue_arn=source,
            batch_size=int(properties.get("BatchSize", DEFAULT_SQS_BATCH_SIZE)),
            batching_window_seconds=int(properties.get("MaximumBatchingWindowInSeconds", 0)),
            max_concurrency=int(scaling.get("MaximumConcurrency", DEFAULT_SQS_CONCURRENCY)),
            report_batch_item_failures="ReportBatchItemFailures"
            in (properties.get("FunctionResponseTypes") or []),
        )
    )


def _schedule_arn(kind: str, region: str, name: str) -> str:
    service, resource = ("events", "rule") if kind == EVENTS_RULE else ("scheduler", "schedule/default")
    return f"arn:{partition_name(region)}:{service}:{region}:{ACCOUNT_ID}:{resource}/{name}"


def _schedules(topology: Topology, logical_id: str, resource: ResolvedResource) -> None:
    properties = resource.properties
    if (
        str(properties.get("State", "ENABLED")).upper() == "DISABLED"
        or "ScheduleExpression" not in properties
    ):
        return
    targets = (
        (properties.get("Targets") or [])
        if resource.kind == EVENTS_RULE
        else [properties.get("Target") or {}]
    )
    arn = _schedule_arn(resource.kind, topology.region, str(properties.get("Name", logical_id)))
    for target in targets:
        function = topology.function_for(str(target.get("Arn", "")))
        if function is None:
            log.warning("%s: only Lambda targets of template functions are played locally", logical_id)
            continue
        topology.schedules.append(
            ScheduleSpec(
                logical_id=logical_id,
                function=function,
                expression=str(properties["ScheduleExpression"]),
                timezone=str(properties.get("ScheduleExpressionTimezone", "UTC")),
                arn=arn,
                input=None if target.get("Input") is None else str(target["Input"]),
                sends_event=resource.kind == EVENTS_RULE,
            )
        )


def _alarm(topology: Topology, logical_id: str, properties: dict[str, Any]) -> None:
    name = str(properties.get("AlarmName", logical_id))
    evaluation_periods = int(properties.get("EvaluationPeriods", 1))
    enabled = str(properties.get("ActionsEnabled", "true")).lower() != "false"
    topology.alarms.append(
        AlarmSpec(
            logical_id=logical_id,
            name=name,
            arn=f"arn:{partition_name(topology.region)}:cloudwatch:{topology.region}:{ACCOUNT_ID}:alarm:{name}",
            description=str(properties.get("AlarmDescription", "")),
            namespace=str(properties.get("Namespace", "")),
            metric_name=str(properties.get("MetricName", "")),
            dimensions=tuple((str(d["Name"]), str(d["Value"])) for d in properties.get("Dimensions") or []),
            statistic=str(properties.get("Statistic", "Average")),
            period_seconds=int(properties.get("Period", 60)),
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=int(properties.get("DatapointsToAlarm", evaluation_periods)),
            threshold=float(properties.get("Threshold", 0)),
            comparison=str(properties.get("ComparisonOperator", "")),
            treat_missing_data=str(properties.get("TreatMissingData", "missing")),
            alarm_actions=tuple(map(str, properties.get("AlarmActions") or [])) if enabled else (),
            ok_actions=tuple(map(str, properties.get("OKActions") or [])) if enabled else (),
        )
    )


def _subscription(topology: Topology, logical_id: str, resource: ResolvedResource) -> None:
    if (resource.translated.get("Properties") or {}).get("Protocol") != "lambda":
        return
    function = topology.function_for(str(resource.properties.get("Endpoint", "")))
    if function is None:
        log.warning("%s: subscribes a function that is not in the template; not played", logical_id)
        return
    topology.subscriptions.append(
        SubscriptionSpec(logical_id, function, str(resource.properties["TopicArn"]))
    )


def _statements(function: ResolvedResource, stack: ResolvedStack) -> tuple[dict[str, Any], ...]:
    role = (function.translated.get("Properties") or {}).get("Role")
    role_id = role.get("Fn::GetAtt", [None])[0] if isinstance(role, dict) else None
    resource = stack.played.get(str(role_id))
    if resource is None or resource.kind != IAM_ROLE:
        return ()
    policies = resource.properties.get("Policies") or []
    return tuple(
        statement for policy in policies for statement in policy["PolicyDocument"].get("Statement", [])
    )


def build_topology(stack: ResolvedStack, translated: dict[str, Any], root: Path, region: str) -> Topology:
    topology = Topology(region=region, outputs=dict(stack.outputs))
    for logical_id, resource in stack.played.items():
        if resource.kind == FUNCTION:
            topology.functions[logical_id] = _function(logical_id, resource, translated, root, region)
            topology.permissions[logical_id] = _statements(resource, stack)
    for logical_id, resource in stack.played.items():
        if resource.kind == HTTP_API:
            _routes(topology, logical_id, resource)
        elif resource.kind == EVENT_SOURCE_MAPPING:
            _event_source(topology, logical_id, resource.properties)
        elif resource.kind in (EVENTS_RULE, SCHEDULER_SCHEDULE):
            _schedules(topology, logical_id, resource)
        elif resource.kind == ALARM:
            _alarm(topology, logical_id, resource.properties)
        elif resource.kind == SUBSCRIPTION:
            _subscription(topology, logical_id, resource)
    return topology
