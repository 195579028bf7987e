"""The bench's in-process rig: the real handlers against moto resources built from template.yaml
(herald_harness.in_moto), with the provider sandbox on loopback, one function's environment at a
time, and what a measured step cost (AWS calls, DynamoDB units, handler time). The scenarios
(bench.scenarios, bench.day_counts, bench.time_order) drive it.
"""

from __future__ import annotations

import functools
import io
import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, field
from typing import Any

from bench.call_observers import CallCounter, CallRecorder
from bench.capacity import TableSchema
from bench.samples import ORDER_EMAIL_HTML, ORDER_EVENT
from bench.table_meter import TableMeter
from herald.adapters.store.models import NamedKeyItem, tenant_pk
from herald.domain.vendors import TENANT_PROVIDERS
from herald.services.tenants import IssuedKey
from herald_harness.in_moto import ApiAnswer, HeraldInMoto, LambdaContext, client
from herald_harness.vendors import side
from herald_local.apigateway.routes import RouteTable
from herald_local.aws.sdk_calls import Proceed, SdkCall, observing
from herald_local.awslambda.functions import LOCAL_WEBHOOK_ORIGIN
from herald_local.cloudformation.template import Template
from herald_local.config import STACK_NAME
from herald_local.sandbox import SandboxServer

API = "ApiFunction"
EMAIL_QUEUE = "EmailNormalQueueUrl"
WEBHOOK_QUEUE = "WebhookNormalQueueUrl"
# The bench tenant's one provider: the provider table's first vendor.
PROVIDER = TENANT_PROVIDERS[0].value
SANDBOX_KEY = "sandbox-bench-key"  # the provider sandbox accepts keys that begin with "sandbox-"
# The inbound tenant's providers, in priority order (the table's first two vendors: the first reports
# deliveries, the second a bounce), with the webhook secrets their events are signed for.
REPORTER, BOUNCER = TENANT_PROVIDERS[:2]
INBOUND_SECRETS = {name.value: side(name).WEBHOOK_SECRET for name in (REPORTER, BOUNCER)}


@dataclass(frozen=True)
class Signed:
    """An inbound request as its sender posts it: signed over these exact bytes."""

    path: str
    body: bytes
    headers: dict[str, str]


def table_schemas(template: Template) -> dict[str, TableSchema]:
    """Every table of the template by its name in moto (the stack's physical ids)."""
    resources = client("cloudformation").describe_stack_resources(StackName=STACK_NAME)["StackResources"]
    physical = {resource["LogicalResourceId"]: resource["PhysicalResourceId"] for resource in resources}
    return {
        physical[name]: TableSchema.from_template(resource["Properties"])
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::DynamoDB::Table"
    }


class FairQueueUse:
    """Whether messages are sent with a MessageGroupId (SQS fair queues cost more per request)."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, call: SdkCall, proceed: Proceed) -> Any:
        if call.service == "sqs" and any(message.get("MessageGroupId") for message in _sent(call)):
            self.seen = True
        return proceed()


def _sent(call: SdkCall) -> list[Mapping[str, Any]]:
    """The messages an SQS call sends: its own parameters, or a batch's entries."""
    if call.operation == "SendMessage":
        return [call.params]
    return list(call.params.get("Entries") or []) if call.operation == "SendMessageBatch" else []


@dataclass
class StepCost:
    """What a step cost for ``count`` notifications."""

    count: int
    meter: TableMeter
    calls: CallCounter = field(default_factory=CallCounter)
    fair_queues: FairQueueUse = field(default_factory=FairQueueUse)
    recorder: CallRecorder = field(default_factory=CallRecorder)
    invocations: Counter[str] = field(default_factory=Counter)
    busy_seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def per_notification(self) -> dict[str, Any]:
        n = self.count
        writes = self.meter.writes
        return {
            "notifications": n,
            "calls": {
                f"{service}:{op}": count / n for (service, op), count in sorted(self.calls.calls.items())
            },
            "write_units": {
                "total": sum(write.charge.total for write in writes) / n,
                "table": sum(write.charge.table_units for write in writes) / n,
                "index": sum(write.charge.index_units for write in writes) / n,
                "by_item": _writes_by_item(self.meter, n),
            },
            "read_units": {
                "total": sum(read.units for read in self.meter.reads) / n,
                "by_item": _reads_by_item(self.meter, n),
            },
            "lambda": {
                function: {"invocations": count / n, "ms": 1000 * self.busy_seconds[function] / n}
                for function, count in sorted(self.invocations.items())
            },
            "fair_queues": self.fair_queues.seen,
        }


def _writes_by_item(meter: TableMeter, n: int) -> list[dict[str, Any]]:
    groups: defaultdict[tuple[str, str, str, int, bool], list[Any]] = defaultdict(list)
    for write in meter.writes:
        groups[(write.request, write.action, write.item, write.nth, write.applied)].append(write)
    return [
        {
            "request": request,
            "action": action,
            "item": item,
            "nth_write_of_item": nth,
            "applied": applied,
            "writes": len(group) / n,
            "bytes_before": round(sum(write.size_before for write in group) / len(group)),
            "bytes_after": round(sum(write.size_after for write in group) / len(group)),
            "table_units": sum(write.charge.table_units for write in group) / n,
            "index_units": sum(write.charge.index_units for write in group) / n,
        }
        for (request, action, item, nth, applied), group in groups.items()
    ]


def _reads_by_item(meter: TableMeter, n: int) -> list[dict[str, Any]]:
    groups: defaultdict[tuple[str, str], list[Any]] = defaultdict(list)
    for read in meter.reads:
        groups[(read.request, read.item)].append(read)
    return [
        {
            "request": request,
            "item": item,
            "reads": len(group) / n,
            "bytes": round(sum(read.size for read in group) / len(group)),
            "units": sum(read.units for read in group) / n,
        }
        for (request, item), group in groups.items()
    ]


class Rig:
    """The handlers in this process, with one function's environment at a time (switching resets
    the process's caches, as a new container would have them)."""

    def __init__(
        self, herald: HeraldInMoto, sandbox: SandboxServer, schemas: Mapping[str, TableSchema]
    ) -> None:
        self.herald = herald
        self.sandbox = sandbox
        self._schemas = schemas
        self._cost: StepCost | None = None
        self._routes = RouteTable(herald.topology.routes)
        self.batch_size = herald.event_source(EMAIL_QUEUE).batch_size

    def hook_url(self, name: str = "bench") -> str:
        """The sandbox's hook receiver; the name chooses its answer (``fail-503-large``...)."""
        return f"{self.sandbox.base_url}/hooks/{name}"

    def environment(self, function: str, extra: Mapping[str, str] | None = None) -> None:
        urls = self.sandbox.provider_settings()
        local = {"HERALD_AWS_MAX_ATTEMPTS": "1", LOCAL_WEBHOOK_ORIGIN: self.sandbox.base_url}
        self.herald.use_function_environment(function, {**local, **urls, **(extra or {})})

    def new_tenant(self) -> IssuedKey:
        """A startup-plan tenant with a provider key and a webhook signing secret."""
        self.environment(API)
        issued = self.herald.new_tenant("startup", "Bench", providers=())
        self.herald.store_provider_key(issued.tenant_id, PROVIDER, SANDBOX_KEY)
        secret = self.herald.api("POST", "/api/v1/account/webhook-secret", {}, key=issued.api_key)
        assert secret.status == 201, secret.body
        return issued

    def named_key(self, owner_key: str, name: str, scopes: list[str]) -> str:
        """A named key of the tenant whose key is ``owner_key``, created through the API."""
        answer = self.herald.api(
            "POST", "/api/v1/account/keys", {"name": name, "scopes": scopes}, key=owner_key
        )
        assert answer.status == 201, answer.body
        return str(answer.data["key"])

    def forget_last_use(self, tenant_id: str) -> None:
        """As if the tenant's keys were last used more than five minutes ago."""
        table = self.herald.table
        for item in table[NamedKeyItem].query(tenant_pk(tenant_id), NamedKeyItem.sk.startswith("KEY#")):
            item.update(actions=[NamedKeyItem.last_used_at.remove()])

    def inbound_tenant(self) -> IssuedKey:
        """A startup-plan tenant whose two providers' keys carry their webhook secrets."""
        self.environment(API)
        issued = self.herald.new_tenant("startup", "Bench", providers=())
        for priority, (provider, secret) in enumerate(INBOUND_SECRETS.items(), start=1):
            self.herald.store_provider_key(
                issued.tenant_id, provider, SANDBOX_KEY, priority, webhook_secret=secret
            )
        return issued

    def handed_over(self, tenant: IssuedKey, recipients: Sequence[str]) -> list[str]:
        """The ids of emails to ``recipients``, accepted and delivered by the first provider."""
        self.herald.drain_queues()
        self.environment(API)
        jobs = [self.send("email", self.email(to), tenant.api_key).data["jobId"] for to in recipients]
        self.environment(self.herald.event_source(EMAIL_QUEUE).function)
        for start in range(0, len(jobs), self.batch_size):
            records = self.receive(EMAIL_QUEUE, min(self.batch_size, len(jobs) - start), tenant.tenant_id)
            assert self.deliver(EMAIL_QUEUE, records) == {"batchItemFailures": []}
        return jobs

    def email(self, recipient: str = "someone@example.com") -> dict[str, Any]:
        return {"to": recipient, "subject": "Your order SO-2026-118734", "body": ORDER_EMAIL_HTML}

    def webhook(self, hook: str = "bench") -> dict[str, Any]:
        return {"url": self.hook_url(hook), "payload": ORDER_EVENT}

    def body(self, route: str, target: str | None = None) -> dict[str, Any]:
        """A request of ``route``; ``target``: the email's recipient or the hook's name."""
        if route == "email":
            return self.email(target) if target else self.email()
        return self.webhook(target) if target else self.webhook()

    @contextmanager
    def measuring(self, count: int) -> Iterator[StepCost]:
        self._cost = StepCost(count, TableMeter(self._schemas, client("dynamodb")))
        try:
            yield self._cost
        finally:
            self._cost = None

    def _invoke(self, function: str, call: Callable[[], Any]) -> Any:
        cost = self._cost
        if cost is None:
            with redirect_stdout(io.StringIO()):
                return call()
        cost.meter.begin_invocation()
        overhead, started = cost.meter.overhead_seconds, time.perf_counter()
        # Powertools prints the function's log lines and metrics (EMF) to stdout, as in Lambda.
        with (
            observing(cost.calls, cost.fair_queues, cost.recorder, cost.meter),
            redirect_stdout(io.StringIO()),
        ):
            result = call()
        cost.busy_seconds[function] += (
            time.perf_counter() - started - (cost.meter.overhead_seconds - overhead)
        )
        cost.invocations[function] += 1
        return result

    def send(
        self, route: str, body: dict[str, Any], key: str, headers: Mapping[str, str] | None = None
    ) -> ApiAnswer:
        call = functools.partial(
            self.herald.api, "POST", f"/api/v1/notifications/{route}", body, key=key, headers=headers
        )
        answer: ApiAnswer = self._invoke(API, call)
        return answer

    def get(self, path: str, key: str, method: str = "GET") -> ApiAnswer:
        return self.call(method, path, None, key)

    def call(self, method: str, path: str, body: Any, key: str) -> ApiAnswer:
        """Any API request by ``key``, answered by ApiFunction (measured inside ``measuring``)."""
        answer: ApiAnswer = self._invoke(API, functools.partial(self.herald.api, method, path, body, key=key))
        return answer

    def invoke(self, function: str, event: Any) -> Any:
        """``function``'s handler on ``event``, in the environment the process has now."""
        return self._invoke(function, functools.partial(self.herald.invoke, function, event))

    def tally(self) -> list[Any]:
        """TallyFunction (each stream event source's function) on what the table's stream holds
        now, in its environment: its answers."""
        answers = []
        for function, records in self.herald.stream_batches():
            self.environment(function)
            answers.append(self.invoke(function, {"Records": records}))
        return answers

    def function_of(self, path: str) -> str:
        """The function the template routes ``POST path`` to."""
        match = self._routes.match("POST", path)
        assert match is not None, f"no template route for POST {path}"
        return match.route.function

    def post(self, request: Signed) -> ApiAnswer:
        """A signed inbound request through its route, answered by the real verifier function."""
        call = functools.partial(self.herald.api, "POST", request.path, request.body, headers=request.headers)
        answer: ApiAnswer = self._invoke(self.function_of(request.path), call)
        return answer

    def receive(self, queue: str, count: int, *tenant_ids: str) -> list[dict[str, Any]]:
        """``count`` messages of the tenants' jobs. Another tenant's message is a straggler of an
        earlier step (a retry's delayed message, which no drain sees until its delay ends): deleted."""
        records: list[dict[str, Any]] = []
        while len(records) < count and (batch := self.herald.receive_records(queue, count - len(records))):
            mine = [record for record in batch if json.loads(record["body"])["tenantId"] in tenant_ids]
            self.herald.acknowledge(queue, [record for record in batch if record not in mine], {})
            records += mine
        assert len(records) == count, f"{len(records)} of {count} messages in {queue}"
        return records

    def deliver(self, queue: str, records: list[dict[str, Any]]) -> dict[str, Any]:
        function = self.herald.event_source(queue).function
        answer: dict[str, Any] = self._invoke(
            function, lambda: self.herald.handle_batch(queue, records, LambdaContext(function))
        )
        self.herald.acknowledge(queue, records, answer)
        return answer


Step = Callable[[Rig], StepCost]
