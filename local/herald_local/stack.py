"""The local stack: moto, the template's resources, functions, gateway, pollers, schedules, alarms
and the provider sandbox, started in order and stopped in reverse order."""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from herald.domain.inbound import Processor
from herald.domain.money import Money
from herald.settings import plan_catalog
from herald_local import demo
from herald_local.apigateway.gateway import Gateway, GatewayServer
from herald_local.apigateway.routes import RouteTable
from herald_local.aws import server as moto_server
from herald_local.aws.clients import moto_client
from herald_local.aws.server import MotoNotReady, MotoProcess
from herald_local.awslambda.functions import FunctionPool, FunctionUnavailable, Invocation, LocalFiles
from herald_local.cloudformation.deferred import UnresolvedExpression
from herald_local.cloudformation.moto_stack import CREATE_TIMEOUT_SECONDS, StackCreationError
from herald_local.cloudformation.parameters import SLACK_PARAMETER, local_parameters, local_secrets
from herald_local.cloudformation.resources import ClientFactory, create_resources
from herald_local.cloudformation.stack_plan import PlanError, needs_sns_bridge
from herald_local.cloudformation.template import TemplateError, load_template, translate
from herald_local.cloudformation.topology import AlarmSpec, Topology
from herald_local.cloudwatch.alarms import AlarmPlayer, alarm_player
from herald_local.cloudwatch.metrics import LocalMetrics
from herald_local.config import (
    ACCOUNT_ID,
    API_PORT_VARIABLE,
    MOTO_PORT_VARIABLE,
    SANDBOX_PORT_VARIABLE,
    STACK_NAME,
    ConfigError,
    LocalConfig,
)
from herald_local.event_sources.pollers import RECEIVE_WAIT_SECONDS, QueuePoller
from herald_local.event_sources.schedules import SchedulePlayer
from herald_local.event_sources.sns_bridge import SnsBridge
from herald_local.event_sources.streams import StreamPoller
from herald_local.host.listeners import bound_port, listen_on
from herald_local.sandbox import PaymentTargets, SandboxServer
from herald_local.state import (
    API_ROOT_OUTPUT,
    API_URL_OUTPUT,
    StackNotRunning,
    read_state,
    remove_state,
    write_state,
)

log = logging.getLogger(__name__)


def setup_clients(config: LocalConfig) -> ClientFactory:
    """Clients for creating the stack. They wait as long as the stack may take to build, because
    moto answers CreateStack only once every resource exists."""
    return lambda service: moto_client(
        service, config.moto_url, config.region, read_timeout=CREATE_TIMEOUT_SECONDS
    )


def checkout_prices(payments: Mapping[str, str]) -> dict[str, Money]:
    """What the sandbox's checkout of each plan key charges: its plan's price, read from the
    variables the payment functions read it from."""
    prices: dict[str, Money] = {}
    for processor in Processor:
        catalog = plan_catalog(processor, payments)
        prices |= {key: catalog.prices[plan] for key, plan in catalog.plans.items() if plan in catalog.prices}
    return prices


# Failures the stack reports in one line (what went wrong and where), without a traceback.
STARTUP_ERRORS: tuple[type[Exception], ...] = (
    MotoNotReady,
    PlanError,
    StackCreationError,
    TemplateError,
    UnresolvedExpression,
    FunctionUnavailable,
)


@dataclass
class _Parts:
    # Bound before anything starts; each is handed to its server (closed here only if never handed).
    listeners: dict[str, socket.socket] = field(default_factory=dict)
    moto: MotoProcess | None = None
    sandbox: SandboxServer | None = None
    bridge: SnsBridge | None = None
    pool: FunctionPool | None = None
    gateway: GatewayServer | None = None
    pollers: list[QueuePoller | StreamPoller] = field(default_factory=list)
    schedules: SchedulePlayer | None = None
    alarms: list[AlarmPlayer] = field(default_factory=list)


class LocalStack:
    def __init__(self, config: LocalConfig) -> None:
        self.config = config
        self.topology: Topology | None = None
        self.demo_tenant: demo.DemoTenant | None = None
        self._parts = _Parts()
        self._started_at = time.time()
        self._owns_state = False
        # What the local stack counts as Lambda and API Gateway would, for the alarms.
        self._metrics = LocalMetrics()

    # ------------------------------------------------------------------ start
    def start(self) -> None:
        """Starts every part in order. Each step done is a "starting:" line on the console and in
        the log, so a start that takes minutes on a busy machine shows it is moving."""
        self._refuse_second_stack()
        parts = self._parts
        parts.listeners = self._bind_ports()
        parts.moto = moto_server.start(parts.listeners[MOTO_PORT_VARIABLE])
        parts.sandbox = self._start_sandbox(parts.listeners[SANDBOX_PORT_VARIABLE])
        topology = self._create_resources(parts.sandbox)
        self.topology = topology
        parts.pool = self._start_functions(topology)
        parts.gateway = self._start_gateway(topology, parts.pool, parts.listeners[API_PORT_VARIABLE])
        self._start_event_sources(topology)
        log.info(
            "starting: the API on %s, %d event sources polling", self.config.gateway_url, len(parts.pollers)
        )
        self._write_state()

    def _write_state(self) -> None:
        write_state(self.config.state_dir, self.state())
        self._owns_state = True

    def _refuse_second_stack(self) -> None:
        try:
            running = read_state(self.config.state_dir)
        except StackNotRunning:
            return
        raise ConfigError(
            f"a local stack is already running (pid {running['pid']}) with state in {self.config.state_dir}; "
            "stop it or set HERALD_LOCAL_DIR"
        )

    def _bind_ports(self) -> dict[str, socket.socket]:
        """Every port bound at once, before anything starts (a port in use stops the start naming its
        variable); from here on the configuration holds the ports bound, which 0 leaves to the system."""
        listeners = listen_on(self.config.ports())
        self.config = self.config.with_ports(
            {variable: bound_port(listener) for variable, listener in listeners.items()}
        )
        return listeners

    def _start_functions(self, topology: Topology) -> FunctionPool:
        pool = FunctionPool(
            topology.functions.values(),
            self.config.moto_url,
            self.config.region,
            self.config.sandbox_url,
            self.config.max_environments,
            files=LocalFiles.in_folder(self.config.state_dir),
            metrics=self._metrics,
        )
        pool.start()
        log.info("starting: %d functions loaded", len(topology.functions))
        return pool

    def _start_gateway(
        self, topology: Topology, pool: FunctionPool, listener: socket.socket
    ) -> GatewayServer:
        gateway = GatewayServer(
            Gateway(RouteTable(topology.routes), pool.__getitem__, self._metrics), listener
        )
        gateway.start()
        return gateway

    def _start_sandbox(self, listener: socket.socket) -> SandboxServer:
        sandbox = SandboxServer(listener=listener)
        # Its imitated checkouts notify this stack's payment routes, signed with its secrets.
        sandbox.context.checkouts.targets = PaymentTargets(
            f"{self.config.gateway_url}/api/v1",
            self.config.payments["HERALD_POLAR_WEBHOOK_SECRET"],
            self.config.payments["HERALD_PAYSTACK_SECRET_KEY"],
            checkout_prices(self.config.payments),
        )
        sandbox.start()
        return sandbox

    def _create_resources(self, sandbox: SandboxServer) -> Topology:
        config = self.config
        template = load_template(config.template_path)
        parameters = local_parameters(template, config, sandbox.provider_base_url)
        translated = translate(template, parameters, config.region)
        if needs_sns_bridge(translated):
            self._parts.bridge = SnsBridge()
            self._parts.bridge.start()
        assert self._parts.moto is not None
        self._parts.moto.wait_ready()
        log.info("starting: moto serving on %s", config.moto_url)
        clients = setup_clients(config)
        topology = create_resources(
            translated,
            parameters,
            clients,
            root=config.root,
            gateway_url=config.gateway_url,
            sns_bridge_url=self._parts.bridge.url if self._parts.bridge else None,
            secrets=local_secrets(template, parameters, config),
        )
        # The operator keeps the Slack webhook URL in SSM; locally it is the sandbox's Slack.
        clients("ssm").put_parameter(
            Name=parameters[SLACK_PARAMETER],
            Value=sandbox.slack_webhook_url,
            Type="SecureString",
            Overwrite=True,
        )
        log.info("starting: %d resources of the template created in moto", len(translated["Resources"]))
        return topology

    def _invoke(self, logical_id: str, event: Any) -> Invocation:
        assert self._parts.pool is not None
        return self._parts.pool[logical_id].invoke(event)

    def _start_event_sources(self, topology: Topology) -> None:
        config, parts = self.config, self._parts
        sqs = moto_client(
            "sqs", config.moto_url, config.region, read_timeout=RECEIVE_WAIT_SECONDS + 10, connections=64
        )
        for source in topology.queue_sources:
            queue_url = sqs.get_queue_url(QueueName=source.queue_name)["QueueUrl"]
            assert parts.pool is not None
            poller = QueuePoller(
                source,
                sqs,
                queue_url,
                parts.pool[source.function].invoke,
                config.region,
                fair=config.fair_serving,
            )
            poller.start()
            parts.pollers.append(poller)
        streams = moto_client("dynamodbstreams", config.moto_url, config.region)
        for stream_source in topology.stream_sources:
            assert parts.pool is not None
            stream_poller = StreamPoller(
                stream_source, streams, parts.pool[stream_source.function].invoke, config.region
            )
            stream_poller.start()
            parts.pollers.append(stream_poller)
        parts.schedules = SchedulePlayer(
            topology.schedules, self._invoke, config.region, every=config.schedule_seconds
        )
        parts.schedules.start()
        sns = moto_client("sns", config.moto_url, config.region)
        if parts.bridge is not None:
            parts.bridge.attach(topology.subscriptions, self._invoke, sns)
        self._start_alarms(topology.alarms, sqs, sns)

    def _start_alarms(self, alarms: list[AlarmSpec], sqs: Any, sns: Any) -> None:
        unplayed = []
        for alarm in alarms:
            player = alarm_player(
                alarm,
                sqs=sqs,
                sns=sns,
                metrics=self._metrics,
                region=self.config.region,
                cadence=self.config.alarm_seconds,
            )
            if player is None:
                unplayed.append(f"{alarm.name} ({alarm.namespace} {alarm.metric_name})")
                continue
            player.start()
            self._parts.alarms.append(player)
        if unplayed:
            log.info(
                "alarms not played locally (the local stack has no source for their metric): %s",
                ", ".join(unplayed),
            )

    # ------------------------------------------------------------------ demo and state
    @property
    def base_url(self) -> str:
        """The SDK's baseUrl: the API's origin."""
        outputs = self.topology.outputs if self.topology else {}
        return outputs.get(API_URL_OUTPUT, self.config.gateway_url)

    @property
    def api_root(self) -> str:
        """The root of the API's routes, which a client without the SDK calls."""
        outputs = self.topology.outputs if self.topology else {}
        return outputs.get(API_ROOT_OUTPUT, self.base_url)

    def create_demo_tenant(self) -> None:
        tenant = demo.create_tenant(self.config.state_dir)
        if tenant is None:
            return
        self.demo_tenant = demo.configure(tenant, self.api_root, self.config.sandbox_url)
        self._write_state()

    def processes(self) -> dict[str, int]:
        parts = self._parts
        pids = {} if parts.pool is None else parts.pool.pids()
        if parts.moto is not None and parts.moto.pid is not None:
            pids["moto"] = parts.moto.pid
        return pids

    def state(self) -> dict[str, Any]:
        config = self.config
        topology = self.topology
        return {
            "pid": os.getpid(),
            "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._started_at)),
            "region": config.region,
            "accountId": ACCOUNT_ID,
            "stackName": STACK_NAME,
            "awsEndpoint": config.moto_url,
            "ports": {"moto": config.moto_port, "api": config.api_port, "sandbox": config.sandbox_port},
            "gatewayUrl": config.gateway_url,
            "apiUrl": self.base_url,
            "apiRootUrl": self.api_root,
            "sandboxUrl": config.sandbox_url,
            "stateDir": str(config.state_dir),
            "logFile": str(config.log_path),
            "outputs": {} if topology is None else topology.outputs,
            "functions": {} if topology is None else {k: v.to_dict() for k, v in topology.functions.items()},
            "processes": self.processes(),
            "demoTenant": None if self.demo_tenant is None else self.demo_tenant.to_dict(),
        }

    def failure(self) -> str | None:
        """Why the stack cannot go on (moto gone), or None while it is healthy."""
        moto = self._parts.moto
        if moto is not None and not moto.alive():
            return f"moto exited with status {moto.exit_code()}"
        return None

    # ------------------------------------------------------------------ stop
    def stop(self) -> None:
        """Stops everything that was started, in reverse order; safe after a failed start."""
        parts = self._parts
        for poller in parts.pollers:
            poller.request_stop()
        steps = [
            *(poller.stop for poller in parts.pollers),
            *(alarm.stop for alarm in parts.alarms),
            parts.schedules.stop if parts.schedules else None,
            parts.gateway.stop if parts.gateway else None,
            parts.pool.stop if parts.pool else None,
            parts.bridge.stop if parts.bridge else None,
            parts.sandbox.stop if parts.sandbox else None,
            parts.moto.stop if parts.moto else None,
        ]
        for step in steps:
            if step is None:
                continue
            try:
                step()
            except Exception:  # noqa: BLE001 - one part failing to stop must not keep the others running
                log.exception("stopping %s failed", getattr(step, "__qualname__", step))
        for listener in parts.listeners.values():
            listener.close()
        if self._owns_state:
            remove_state(self.config.state_dir)
