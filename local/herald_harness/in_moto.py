"""Herald's real handlers, in this process, against moto resources created from template.yaml.

The resources and every function's environment come from the template through the local
runtime's own provisioning (herald_local.cloudformation.resources), so the tests and the benchmarks
cannot drift from what deploys.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import boto3
from botocore.config import Config
from moto import mock_aws

from herald.adapters.store.account_store import DynamoAccountStore
from herald.adapters.store.delivery_store import DynamoDeliveryStore
from herald.adapters.store.table import Table
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition import common
from herald.domain.access import Actor, ActorKind
from herald.domain.account import hash_api_key
from herald.domain.audit import AuditAction, AuditEntry, entry
from herald.domain.clock import now_iso
from herald.domain.job_records import JobState
from herald.domain.providers import StoredProvider
from herald.domain.secrets import Purpose
from herald.domain.vendors import TENANT_PROVIDERS
from herald.services.tenants import IssuedKey, TenantAdmin
from herald_harness.inbound_signers import payment_environment
from herald_harness.patches import ProcessPatches
from herald_harness.ses_tenants import imitating_ses_tenants
from herald_local.apigateway.events import ApiContext, HttpRequest, build_event
from herald_local.apigateway.routes import RouteTable
from herald_local.aws.atomic_dynamodb import make_dynamodb_atomic
from herald_local.aws.function_calls import acting_as
from herald_local.awslambda.functions import Invocation
from herald_local.cloudformation.parameters import local_parameters, local_secrets
from herald_local.cloudformation.resources import create_resources
from herald_local.cloudformation.template import load_template, translate
from herald_local.cloudformation.topology import QueueSourceSpec, Topology
from herald_local.config import LocalConfig
from herald_local.event_sources.pollers import sqs_record
from herald_local.event_sources.sns_bridge import SnsBridge
from herald_local.event_sources.streams import StreamReader
from herald_local.state import API_URL_OUTPUT

REGION = "us-east-1"
# A paid tenant's one provider unless a test names others: the provider table's first vendor.
FIRST_PROVIDER = (TENANT_PROVIDERS[0].value,)
NO_RETRIES = Config(retries={"max_attempts": 0}, region_name=REGION)
SANDBOX = "http://127.0.0.1:9/{}"  # nothing listens: provider calls fail fast unless a test serves them
# The payment processors' secrets and Herald's plans there, as the local stack takes them.
PAYMENTS = payment_environment()

# Who the audit log names for the tenants and keys the harness sets up (as the operator would).
HARNESS = Actor(ActorKind.OPERATOR, "test-harness", "test harness")


def harness_entry(tenant_id: str, action: AuditAction, target: str, **details: str) -> AuditEntry:
    """The audit entry of a change a test makes straight in the table, as the harness's."""
    return entry(tenant_id, now_iso(), HARNESS, action, target, **details)


class LambdaContext:
    def __init__(self, name: str, remaining_ms: int = 60_000) -> None:
        self.function_name = name
        self.memory_limit_in_mb = 512
        self.invoked_function_arn = f"arn:aws:lambda:{REGION}:123456789012:function:{name}"
        self.aws_request_id = str(uuid.uuid4())
        self._remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return self._remaining_ms


@dataclass
class ApiAnswer:
    status: int
    text: str
    headers: dict[str, str]
    # Set-Cookie values (payload 2.0 answers them apart from the headers).
    cookies: list[str] = field(default_factory=list)

    @property
    def body(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.text)
        return parsed

    @property
    def data(self) -> Any:
        return self.body["data"]


def client(service: str) -> Any:
    return boto3.client(service, region_name=REGION, config=NO_RETRIES)  # type: ignore[call-overload]


def _reset_process_caches() -> None:
    """A fresh cold start: settings, table, clients and services built anew."""
    common.reset()


def _load_handler_module(spec_dir: str, name: str) -> ModuleType:
    sys.path.insert(0, spec_dir)
    try:
        spec = importlib.util.spec_from_file_location(name, f"{spec_dir}/app.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        # As on Lambda, the folder stays importable: a handler may import its modules on first need.
        sys.path.remove(spec_dir)
        sys.path.append(spec_dir)


class HeraldInMoto:
    def __init__(self, topology: Topology, patches: ProcessPatches, deliveries: SnsDeliveries) -> None:
        self.topology = topology
        self.sns = deliveries
        self._patches = patches
        self._routes = RouteTable(topology.routes)
        self._modules: dict[str, ModuleType] = {}
        # The function whose environment this process has now.
        self._current: str | None = None
        self._streams: dict[str, StreamReader] = {}

    def use_function_environment(self, logical_id: str, extra: Mapping[str, str] | None = None) -> None:
        """Give this process exactly the environment the template gives that function."""
        for name, value in {**self.topology.functions[logical_id].environment, **(extra or {})}.items():
            self._patches.setenv(name, value)
        _reset_process_caches()
        self._current = logical_id

    def handler_module(self, logical_id: str) -> ModuleType:
        if logical_id not in self._modules:
            spec = self.topology.functions[logical_id]
            self._modules[logical_id] = _load_handler_module(spec.code_dir, f"{logical_id}_app")
        return self._modules[logical_id]

    def invoke(self, logical_id: str, event: Any, context: LambdaContext | None = None) -> Any:
        """Run the function's handler on ``event`` in this process (in its environment, if a test set
        it); the AWS calls it makes count as that function's."""
        with acting_as(logical_id):
            return self.handler_module(logical_id).handler(event, context or LambdaContext(logical_id))

    def api(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        key: str | None = None,
        headers: Mapping[str, str] | None = None,
        content_type: str | None = "application/json",
    ) -> ApiAnswer:
        raw = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        pairs = list((headers or {}).items())
        if not any(name.lower() == "host" for name, _ in pairs):
            pairs.append(("host", "api.herald.test"))
        if content_type is not None:
            pairs.append(("content-type", content_type))
        if key:
            pairs.append(("x-api-key", key))
        request = HttpRequest(method=method, target=path, headers=pairs, body=raw, source_ip="203.0.113.9")
        match = self._routes.match(method, request.path)
        assert match is not None, f"no template route for {method} {path}"
        event = build_event(request, match, ApiContext(api_id="herald"))
        # The function the template routes the request to answers it, in its own environment (a
        # switch is a cold start; a test that set the environment itself keeps it).
        function = match.route.function
        if self._current != function:
            self.use_function_environment(function, {"HERALD_AWS_MAX_ATTEMPTS": "1"})
        answer = self.invoke(function, event)
        return ApiAnswer(
            answer["statusCode"],
            answer["body"],
            dict(answer.get("headers") or {}),
            list(answer.get("cookies") or []),
        )

    def new_tenant(
        self, plan: str = "startup", name: str = "Acme", *, providers: tuple[str, ...] = FIRST_PROVIDER
    ) -> IssuedKey:
        """A tenant created as the operator CLI creates one, in the process's current binding; a
        paid one also gets sandbox keys for ``providers``, as paid plans send only through them."""
        issued = TenantAdmin(DynamoTenantStore(self.table)).create(
            name, f"ops@{name.lower()}.test", plan, HARNESS
        )
        if plan != "free":
            for priority, provider in enumerate(providers, start=1):
                self.store_provider_key(
                    issued.tenant_id, provider, f"{provider.lower()}-test-key-{priority:04d}", priority
                )
        return issued

    def store_provider_key(
        self,
        tenant_id: str,
        provider: str,
        api_key: str,
        priority: int = 1,
        *,
        webhook_secret: str | None = None,
    ) -> None:
        """A provider key (and its webhook secret) stored sealed, as PUT /account/providers stores
        them (without the live check)."""
        secrets = common.vault()
        stored = StoredProvider(
            provider=provider,
            priority=priority,
            api_key=secrets.seal(tenant_id, Purpose.PROVIDER_KEY, api_key),
            last_four=api_key[-4:],
            added_at="2026-01-01T00:00:00.000Z",
            webhook_secret=secrets.seal(tenant_id, Purpose.INBOUND_SECRET, webhook_secret)
            if webhook_secret
            else None,
        )
        audit = harness_entry(tenant_id, AuditAction.PROVIDER_ADDED, provider, priority=str(priority))
        DynamoAccountStore(self.table).save_provider(tenant_id, stored, audit)

    @property
    def origin(self) -> str:
        """The stack's public origin: the local gateway's, which the local stack gives the template's
        PublicOrigin and the API's URL alike (no request goes there: ``api`` invokes in process)."""
        return self.topology.outputs[API_URL_OUTPUT]

    @property
    def table(self) -> Table:
        """The table as the function environment this process has now binds it."""
        return common.foundation().table

    def new_key(self, plan: str = "startup") -> str:
        return self.new_tenant(plan).api_key

    def tenant_of(self, api_key: str) -> str:
        record = DynamoTenantStore(self.table).find_api_key(hash_api_key(api_key))
        assert record is not None, "no such API key"
        return record.tenant_id

    def job_state(self, tenant_id: str, job_id: str) -> JobState | None:
        return DynamoDeliveryStore(self.table).current(tenant_id, job_id)

    def sqs(self) -> Any:
        """The SQS client the functions of this process use."""
        return common.foundation().clients.sqs()

    def invoke_function(self, logical_id: str, event: Any) -> Any:
        """Invoke a template function in this process, in its own template environment."""
        self.use_function_environment(logical_id, {"HERALD_AWS_MAX_ATTEMPTS": "1"})
        return self.invoke(logical_id, event)

    def stream_batches(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """(function, records) for each of the template's stream event sources with something new:
        the table stream's records since the last call that pass its filters, in one batch."""
        batches = []
        for source in self.topology.stream_sources:
            reader = self._streams.get(source.logical_id)
            if reader is None:
                reader = self._streams[source.logical_id] = StreamReader(
                    source, client("dynamodbstreams"), REGION
                )
            records = reader.read(source.batch_size)
            if records:
                batches.append((source.function, records))
        return batches

    def tally(self) -> list[Any]:
        """What the stream event sources do with what the table's stream holds now: each batch
        handed to its function (in its environment); the functions' answers."""
        return [
            self.invoke_function(function, {"Records": records})
            for function, records in self.stream_batches()
        ]

    def queue_url(self, output: str) -> str:
        return self.topology.outputs[output]

    def drain_queues(self) -> None:
        """Delete every message (PurgeQueue is allowed once a minute, like in SQS)."""
        sqs = client("sqs")
        for name, url in self.topology.outputs.items():
            if not name.endswith("QueueUrl"):
                continue
            while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
                for message in batch:
                    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])

    def queued(self, output: str) -> list[dict[str, Any]]:
        """Every message waiting in the queue of that template output (made visible again)."""
        sqs = client("sqs")
        received: list[dict[str, Any]] = sqs.receive_message(
            QueueUrl=self.queue_url(output), MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
        ).get("Messages", [])
        for message in received:
            sqs.change_message_visibility(
                QueueUrl=self.queue_url(output), ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )
        return received

    def event_source(self, output: str) -> QueueSourceSpec:
        """The template's SQS event source that reads the queue of that output."""
        name = self.queue_url(output).rsplit("/", 1)[-1]
        return next(source for source in self.topology.queue_sources if source.queue_name == name)

    def receive_records(self, output: str, max_messages: int = 10) -> list[dict[str, Any]]:
        """The waiting messages of that queue (up to ``max_messages``), received as Lambda's poller
        receives them and shaped as the records of the event its function gets; they stay in flight
        until deleted."""
        received = client("sqs").receive_message(
            QueueUrl=self.queue_url(output),
            MaxNumberOfMessages=max_messages,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        source = self.event_source(output)
        return [sqs_record(message, source, REGION) for message in received.get("Messages", [])]

    def invoke_worker(
        self,
        output: str,
        records: list[dict[str, Any]],
        *,
        environment: Mapping[str, str] | None = None,
        context: LambdaContext | None = None,
    ) -> dict[str, Any]:
        """Invoke the function the template feeds from that queue with ``{"Records": records}``, in
        that function's environment (plus ``environment``); then, as Lambda does, delete the records
        its answer does not report in ``batchItemFailures``."""
        self.use_function_environment(self.event_source(output).function, environment)
        answer = self.handle_batch(output, records, context)
        self.acknowledge(output, records, answer)
        return answer

    def handle_batch(
        self, output: str, records: list[dict[str, Any]], context: LambdaContext | None = None
    ) -> dict[str, Any]:
        """The handler of the function fed from that queue, on ``{"Records": records}``, in the
        environment the process has now (warm caches stay warm)."""
        function = self.event_source(output).function
        answer: dict[str, Any] = self.invoke(function, {"Records": records}, context)
        return answer

    def acknowledge(self, output: str, records: list[dict[str, Any]], answer: dict[str, Any]) -> None:
        """As Lambda does: delete the records the answer does not report in ``batchItemFailures``."""
        failed = {failure["itemIdentifier"] for failure in answer.get("batchItemFailures") or []}
        done = {record["receiptHandle"] for record in records if record["messageId"] not in failed}
        for receipt_handle in done:
            client("sqs").delete_message(QueueUrl=self.queue_url(output), ReceiptHandle=receipt_handle)


class SnsDeliveries:
    """What moto delivers to the template's SNS subscriptions of functions, kept as the events those
    functions would get (the local stack's SNS bridge, which invokes nothing here)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self.bridge = SnsBridge()

    def record(self, function: str, event: Any) -> Invocation:
        with self._lock:
            self.events.append((function, event))
        return Invocation("", b"null", None)

    def of(self, function: str) -> list[dict[str, Any]]:
        with self._lock:
            return [event for name, event in self.events if name == function]


@contextmanager
def template_in_moto(patches: ProcessPatches, deliveries: SnsDeliveries | None = None) -> Iterator[Topology]:
    """template.yaml's resources created in moto (in this process), as the local stack creates them;
    SNS notifications to functions are kept by ``deliveries``."""
    for variable in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_ENDPOINT_URL_DYNAMODB"):
        patches.delenv(variable, raising=False)
    patches.setenv("AWS_DEFAULT_REGION", REGION)
    patches.setenv("AWS_ACCESS_KEY_ID", "testing")
    patches.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    make_dynamodb_atomic()
    with imitating_ses_tenants(), mock_aws():
        config = LocalConfig.from_env({"AWS_DEFAULT_REGION": REGION, **PAYMENTS})
        template = load_template(config.template_path)
        parameters = local_parameters(template, config, SANDBOX.format)
        translated = translate(template, parameters, REGION)
        deliveries = deliveries or SnsDeliveries()
        deliveries.bridge.start()
        try:
            topology = create_resources(
                translated,
                parameters,
                client,
                root=config.root,
                gateway_url=config.gateway_url,
                sns_bridge_url=deliveries.bridge.url,
                secrets=local_secrets(template, parameters, config),
            )
            deliveries.bridge.attach(topology.subscriptions, deliveries.record, client("sns"))
            yield topology
        finally:
            deliveries.bridge.stop()


@contextmanager
def herald_in_moto(patches: ProcessPatches) -> Iterator[HeraldInMoto]:
    deliveries = SnsDeliveries()
    with template_in_moto(patches, deliveries) as topology:
        herald = HeraldInMoto(topology, patches, deliveries)
        herald.use_function_environment("ApiFunction", {"HERALD_AWS_MAX_ATTEMPTS": "1"})
        try:
            yield herald
        finally:
            _reset_process_caches()
