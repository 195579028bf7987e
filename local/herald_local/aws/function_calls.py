"""The AWS calls of a function, seen from inside its process: recorded as the IAM action and resource
each one is authorised against (the least-privilege check compares them with the template's
policies), and chosen ones made to fail (to rehearse an outage on the local stack).

An observer of every AWS SDK call of the process (``sdk_calls``). A runner installs it for its whole
process; in-process tests make a handler the active function only while it runs, so calls of the
test's own set-up are not counted.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from botocore.exceptions import ClientError

from herald_local.aws.regions import partition_name
from herald_local.aws.sdk_calls import Proceed, SdkCall, observe
from herald_local.config import ACCOUNT_ID

# The error a failed call answers with: what AWS answers when a service is briefly unavailable.
FAULT_CODE = "ServiceUnavailable"
# DynamoDB checks the permission of each part of a transaction, not of the transaction itself.
_TRANSACTION_PARTS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


@dataclass(frozen=True)
class AwsCall:
    """One permission a call needed: the action, the resource and the condition keys it sets."""

    function: str
    action: str
    resource: str
    context: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, line: str) -> AwsCall:
        data = json.loads(line)
        context = tuple((str(key), str(value)) for key, value in data.get("context", []))
        return cls(str(data["function"]), str(data["action"]), str(data["resource"]), context)


def _arn(service: str, region: str, resource: str, account: str = ACCOUNT_ID) -> str:
    return f"arn:{partition_name(region)}:{service}:{region}:{account}:{resource}"


def _dynamodb(operation: str, params: Mapping[str, Any], region: str) -> list[tuple[str, str]]:
    def table(name: str, index: str | None = None) -> str:
        return _arn("dynamodb", region, f"table/{name}" + (f"/index/{index}" if index else ""))

    if operation == "TransactWriteItems":
        parts = []
        for item in params.get("TransactItems", []):
            ((kind, body),) = item.items()
            parts.append((_TRANSACTION_PARTS[kind], table(body["TableName"])))
        return parts
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [(operation, table(name)) for name in params.get("RequestItems", {})]
    if "TableName" in params:
        return [(operation, table(params["TableName"], params.get("IndexName")))]
    return [(operation, "*")]


# SQS's batch calls have no IAM actions of their own: each is allowed by its single call's action.
_SQS_BATCH_ACTIONS = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}


def _sqs(operation: str, params: Mapping[str, Any], region: str) -> list[tuple[str, str]]:
    operation = _SQS_BATCH_ACTIONS.get(operation, operation)
    if "QueueUrl" in params:
        account, name = urlsplit(params["QueueUrl"]).path.strip("/").split("/")[-2:]
        return [(operation, _arn("sqs", region, name, account))]
    return [(operation, _arn("sqs", region, params["QueueName"]) if "QueueName" in params else "*")]


def _kms(params: Mapping[str, Any], region: str, response: Mapping[str, Any]) -> str:
    # Decrypt names its key only in the ciphertext; the answer says which key it was.
    key = str(response.get("KeyId") or params.get("KeyId") or "*")
    return key if key.startswith("arn:") or key == "*" else _arn("kms", region, f"key/{key}")


def _resource(service: str, params: Mapping[str, Any], region: str) -> str:
    """The resource of a call to a service whose calls name one resource each ("*" for none)."""
    if service == "sns":
        return str(params.get("TopicArn", "*"))
    if service == "ssm" and "Name" in params:
        return _arn("ssm", region, "parameter/" + str(params["Name"]).lstrip("/"))
    if service == "ses" and "FromEmailAddress" in params:
        return _arn("ses", region, "identity/" + str(params["FromEmailAddress"]).rsplit("@", 1)[-1])
    if service == "s3" and "Bucket" in params:
        # An object's ARN names neither region nor account.
        return f"arn:{partition_name(region)}:s3:::{params['Bucket']}/{params.get('Key', '')}"
    return "*"


def _ses_tenant(operation: str, params: Mapping[str, Any], region: str) -> list[tuple[str, str]]:
    """An SES tenant call: authorised on the tenant (named, or by its ARN as a reputation entity),
    and an association also on the resource it associates."""
    if "ReputationEntityReference" in params:
        return [(operation, str(params["ReputationEntityReference"]))]
    tenant = _arn("ses", region, f"tenant/{params['TenantName']}")
    if "ResourceArn" in params:
        return [(operation, tenant), (operation, str(params["ResourceArn"]))]
    return [(operation, tenant)]


def resources(
    service: str, operation: str, params: Mapping[str, Any], response: Mapping[str, Any] | None, region: str
) -> list[tuple[str, str]]:
    """(action name, resource ARN) of each permission the call needs; "*" where it names none."""
    if (
        service == "ses"
        and operation != "SendEmail"
        and ({"TenantName", "ReputationEntityReference"} & set(params))
    ):
        return _ses_tenant(operation, params, region)
    if service == "dynamodb":
        return _dynamodb(operation, params, region)
    if service == "sqs":
        return _sqs(operation, params, region)
    if service == "kms":
        return [(operation, _kms(params, region, response or {}))]
    return [(operation, _resource(service, params, region))]


def condition_context(service: str, params: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The condition keys a call sets that Herald's policies test."""
    if service == "ses" and "FromEmailAddress" in params:
        return (("ses:FromAddress", str(params["FromEmailAddress"])),)
    return ()


@dataclass(frozen=True)
class Fault:
    """Calls to fail: ``action`` of ``function`` (any function when None) whose parameters, as
    JSON, contain ``match`` (any when None)."""

    action: str
    function: str | None = None
    match: str | None = None

    def hits(self, function: str, action: str, params: Mapping[str, Any]) -> bool:
        if self.action != action or self.function not in (None, function):
            return False
        return self.match is None or self.match in json.dumps(params, default=str)


def read_faults(path: Path) -> list[Fault]:
    """The faults file: a JSON list of {action, function?, match?}; none when it is absent."""
    try:
        rules = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    return [Fault(str(rule["action"]), rule.get("function"), rule.get("match")) for rule in rules]


class PermissionLog:
    """Appends each permission not seen before in this process to a JSON-lines file."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._seen: set[AwsCall] = set()
        self._lock = threading.Lock()

    def record(self, calls: list[AwsCall]) -> None:
        with self._lock:
            new = [call for call in calls if call not in self._seen]
            if not new:
                return
            self._seen.update(new)
            self._path.parent.mkdir(parents=True, exist_ok=True)
            with self._path.open("a", encoding="utf-8") as stream:
                stream.writelines(call.to_json() + "\n" for call in new)


# Calls to resources that do not exist (a test's deliberately wrong queue URL) need no permission.
_NO_SUCH_RESOURCE = frozenset(
    {"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", "ResourceNotFoundException"}
)


@dataclass
class _Watch:
    log: PermissionLog | None = None
    faults: Callable[[], list[Fault]] | None = None
    # The function whose calls these are in a runner: every call of the process.
    function: str | None = None


_watch = _Watch()
# In-process tests: the function whose handler runs in this thread (see ``acting_as``).
_acting = threading.local()


@dataclass
class _Call:
    region: str
    response: Any = None
    error_code: str | None = None


def _record(function: str, service: str, operation: str, params: dict[str, Any], call: _Call) -> None:
    if _watch.log is None or call.error_code in _NO_SUCH_RESOURCE:
        return
    context = condition_context(service, params)
    _watch.log.record(
        [
            AwsCall(function, f"{service}:{action}", resource, context)
            for action, resource in resources(service, operation, params, call.response, call.region)
        ]
    )


def _faulted(function: str, action: str, params: dict[str, Any], operation: str) -> ClientError | None:
    for fault in _watch.faults() if _watch.faults else []:
        if fault.hits(function, action, params):
            message = "failed on purpose by the local stack's faults file"
            return ClientError({"Error": {"Code": FAULT_CODE, "Message": message}}, operation)
    return None


def _watched(sdk_call: SdkCall, proceed: Proceed) -> Any:
    function = getattr(_acting, "function", None) or _watch.function
    if function is None:
        return proceed()
    service, operation, params = sdk_call.action_prefix, sdk_call.operation, sdk_call.params
    call = _Call(sdk_call.region)
    try:
        fault = _faulted(function, f"{service}:{operation}", params, operation)
        if fault is not None:
            raise fault
        call.response = proceed()
    except ClientError as exc:
        call.error_code = exc.response.get("Error", {}).get("Code")
        raise
    finally:
        _record(function, service, operation, params, call)
    return call.response


def watch_process(function: str, calls_file: Path | None, faults_file: Path | None) -> None:
    """A runner's process: every call is ``function``'s, recorded and checked against the faults file
    (read again on each call, so faults can be switched on and off while the stack runs)."""
    _watch.log = PermissionLog(calls_file) if calls_file is not None else None
    _watch.faults = (lambda: read_faults(faults_file)) if faults_file is not None else None
    _watch.function = function
    observe(_watched)


def record_calls_to(calls_file: Path) -> None:
    """In-process tests: record the calls of whichever function is ``acting_as`` (none otherwise)."""
    _watch.log = PermissionLog(calls_file)
    observe(_watched)


@contextmanager
def acting_as(function: str) -> Iterator[None]:
    """The calls this thread makes inside are ``function``'s (an in-process test invoking its handler)."""
    previous = getattr(_acting, "function", None)
    _acting.function = function
    try:
        yield
    finally:
        _acting.function = previous


def read_calls(folder: Path) -> Iterator[AwsCall]:
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                yield AwsCall.from_json(line)


def calls_file(folder: Path, label: str) -> Path:
    return folder / f"{label}-{os.getpid()}.jsonl"
