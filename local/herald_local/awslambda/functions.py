"""The template's functions, each in its own runner process, invoked through the Lambda Invoke API."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3

from herald import INITIALIZATION_TYPE
from herald_local.aws.clients import FAKE_CREDENTIALS
from herald_local.awslambda.runner import (
    ENVIRONMENT_ENDS_HEADER,
    FUNCTION_ERROR_HEADER,
    READY_MARKER,
    REQUEST_ID_HEADER,
)
from herald_local.cloudformation.topology import FunctionSpec
from herald_local.cloudwatch.metrics import LocalMetrics
from herald_local.config import (
    AWS_CALLS_DIR_NAME,
    DEFAULT_MAX_ENVIRONMENTS,
    FAULTS_FILE_NAME,
    SANDBOX_HOOKS_PATH,
)
from herald_local.host.console import child_line
from herald_local.host.processes import ChildProcess, python_module

log = logging.getLogger(__name__)

_READY_TIMEOUT_SECONDS = 60.0
# Room past the function timeout for the runner to answer with its own timeout error.
_ANSWER_MARGIN_SECONDS = 5.0
_http = urllib3.PoolManager(maxsize=64, retries=False)

# Only local tooling reads these; the template never sets them, so deployed stacks never do.
LOCAL_ONLY_ENVIRONMENT = {"HERALD_AWS_MAX_ATTEMPTS": "1"}
# The one loopback place webhooks may target: the provider sandbox's receiver (never its other
# routes, moto or another port).
LOCAL_WEBHOOK_ORIGIN = "HERALD_LOCAL_WEBHOOK_ORIGIN"
# SES v2 goes to the sandbox's imitation instead of moto, so platform mail shows in its mailbox.
SES_ENDPOINT = "AWS_ENDPOINT_URL_SESV2"
# What a process needs to start at all, passed through from the developer's shell.
_PASSED_THROUGH = ("PATH", "SYSTEMROOT", "TMPDIR", "LANG", "LC_ALL")


class FunctionUnavailable(RuntimeError):
    """The runner did not answer (not running, crashed, or slower than the caller's timeout)."""

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


@dataclass(frozen=True)
class Invocation:
    request_id: str
    payload: bytes
    function_error: str | None

    @property
    def failed(self) -> bool:
        return self.function_error is not None

    def document(self) -> Any:
        return json.loads(self.payload)


def runner_environment(spec: FunctionSpec, moto_url: str, region: str, sandbox_url: str) -> dict[str, str]:
    """Exactly the template's environment for the function, plus what Lambda and the local stack add."""
    base = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    return {
        **base,
        **spec.environment,
        **FAKE_CREDENTIALS,
        **LOCAL_ONLY_ENVIRONMENT,
        LOCAL_WEBHOOK_ORIGIN: sandbox_url + SANDBOX_HOOKS_PATH,
        # Keep a developer's ~/.aws settings (profiles, endpoints, retries) out of the functions.
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_ENDPOINT_URL": moto_url,
        SES_ENDPOINT: f"{sandbox_url}/ses",
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "AWS_LAMBDA_FUNCTION_NAME": spec.name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        INITIALIZATION_TYPE: "on-demand",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{spec.name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "local/[$LATEST]herald-local",
        "LAMBDA_TASK_ROOT": spec.code_dir,
        "_HANDLER": spec.handler,
        "TZ": ":UTC",
        "PYTHONUNBUFFERED": "1",
    }


@dataclass(frozen=True)
class LocalFiles:
    """Where runners record the AWS calls they make, and the faults file they obey."""

    aws_calls_dir: Path
    faults_file: Path

    @classmethod
    def in_folder(cls, state_dir: Path) -> LocalFiles:
        return cls(state_dir / AWS_CALLS_DIR_NAME, state_dir / FAULTS_FILE_NAME)

    def arguments(self) -> list[str]:
        return ["--aws-calls-dir", str(self.aws_calls_dir), "--faults-file", str(self.faults_file)]


def _runner_argv(spec: FunctionSpec, files: LocalFiles | None) -> list[str]:
    arguments = [
        "--function-name",
        spec.name,
        "--function-arn",
        spec.arn,
        "--handler",
        spec.handler,
        "--code-dir",
        spec.code_dir,
        "--timeout",
        str(spec.timeout_seconds),
        "--memory",
        str(spec.memory_mb),
    ]
    for layer in spec.layer_dirs:
        arguments += ["--layer-dir", layer]
    if files is not None:
        arguments += files.arguments()
    return python_module("herald_local.awslambda.runner", *arguments)


class FunctionProcess:
    """One execution environment of a function: a runner process serving one invocation at a time."""

    def __init__(
        self,
        spec: FunctionSpec,
        environment: Mapping[str, str],
        label: str | None = None,
        files: LocalFiles | None = None,
    ) -> None:
        self.spec = spec
        self.label = label or spec.logical_id
        self._environment = dict(environment)
        self._files = files
        self._ready = threading.Event()
        self._port: int | None = None
        self._child: ChildProcess | None = None
        self._started = 0.0

    def _on_line(self, line: str) -> bool:
        if self._port is None and line.startswith(READY_MARKER):
            self._port = int(line.split()[1])
            self._ready.set()
            # In the log (and a verbose console): a slow start shows each environment as it comes up.
            child_line(self.label, f"environment ready in {time.monotonic() - self._started:.1f} s")
            return True
        return False

    def start(self) -> None:
        self._port = None
        self._ready.clear()
        self._started = time.monotonic()
        self._child = ChildProcess(
            self.label,
            _runner_argv(self.spec, self._files),
            env=self._environment,
            line_filter=self._on_line,
        )
        self._child.start()

    def wait_ready(self, timeout: float = _READY_TIMEOUT_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.05):
            code = None if self._child is None else self._child.exit_code()
            if code is not None or time.monotonic() > deadline:
                raise FunctionUnavailable(f"{self.label} runner did not start (exit status {code})")

    @property
    def pid(self) -> int | None:
        return None if self._child is None else self._child.pid

    def alive(self) -> bool:
        return self._child is not None and self._child.alive()

    def terminate(self) -> None:
        if self._child is not None:
            self._child.terminate()

    def stop(self) -> None:
        if self._child is not None:
            self._child.stop()

    def invoke(self, event: Any, timeout: float | None = None) -> Invocation:
        """Invokes synchronously; ``timeout`` bounds the wait below the function's own timeout."""
        limit = self.spec.timeout_seconds + _ANSWER_MARGIN_SECONDS if timeout is None else timeout
        url = f"http://127.0.0.1:{self._port}/2015-03-31/functions/{self.spec.name}/invocations"
        try:
            response = _http.request(
                "POST",
                url,
                body=json.dumps(event).encode(),
                headers={"Content-Type": "application/json"},
                timeout=urllib3.Timeout(connect=2.0, read=limit),
            )
        except urllib3.exceptions.ReadTimeoutError as exc:
            raise FunctionUnavailable(f"{self.label} did not answer within {limit:.0f} s", True) from exc
        except urllib3.exceptions.HTTPError as exc:
            raise FunctionUnavailable(f"{self.label} runner is unreachable: {exc}") from exc
        if response.status != 200:
            raise FunctionUnavailable(f"{self.label} runner refused the event (HTTP {response.status})")
        if response.headers.get(ENVIRONMENT_ENDS_HEADER):
            self.stop()  # it is exiting; waiting for that keeps it from being handed another event
        return Invocation(
            request_id=response.headers.get(REQUEST_ID_HEADER, ""),
            payload=response.data,
            function_error=response.headers.get(FUNCTION_ERROR_HEADER),
        )


class FunctionEnvironments:
    """The execution environments of one function, as Lambda scales them: each serves one
    invocation at a time; an invocation that finds none idle starts one more (a cold start) up to
    the cap, or waits for one to come free.

    Why a pool and not one serialised runner: a worker blocked on a slow provider (``timeout@``
    recipients) would hold up every other delivery of that function, which Lambda never does. Why
    a small cap (DEFAULT_MAX_ENVIRONMENTS, lower if the template reserves less): on a 2-core
    machine more processes only compete for the same cores and memory, and an environment is started only when
    every existing one is busy, one at a time, so a burst costs one cold start after another
    rather than a stampede of imports.
    """

    def __init__(
        self,
        spec: FunctionSpec,
        environment: Mapping[str, str],
        max_environments: int,
        files: LocalFiles | None = None,
        metrics: LocalMetrics | None = None,
    ) -> None:
        self.spec = spec
        self._environment = dict(environment)
        self._files = files
        self._metrics = metrics or LocalMetrics()
        reserved = spec.reserved_concurrency
        self._cap = max_environments if reserved is None else min(reserved, max_environments)
        self._all: list[FunctionProcess] = []
        self._idle: list[FunctionProcess] = []
        self._starting = False
        self._started = 0  # environments ever started: numbers them on the console
        self._changed = threading.Condition()

    def start(self) -> None:
        """Starts the first environment (not waiting for it, so all functions import in parallel)."""
        with self._changed:
            self._all.append(self._new_process())

    def wait_ready(self) -> None:
        first = self._all[0]
        first.wait_ready()
        with self._changed:
            self._idle.append(first)
            self._changed.notify()

    def _new_process(self) -> FunctionProcess:
        self._started += 1
        number = self._started
        label = self.spec.logical_id if number == 1 else f"{self.spec.logical_id}#{number}"
        process = FunctionProcess(self.spec, self._environment, label=label, files=self._files)
        process.start()
        return process

    def invoke(self, event: Any, timeout: float | None = None) -> Invocation:
        """Invokes in an environment of its own; ``timeout`` covers the wait for one as well."""
        limit = self.spec.timeout_seconds + _ANSWER_MARGIN_SECONDS if timeout is None else timeout
        deadline = time.monotonic() + limit
        try:
            process = self._acquire(deadline)
        except FunctionUnavailable:
            self._metrics.invocation(self.spec.name, throttled=True)
            raise
        try:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._too_late()
            invocation = process.invoke(event, remaining)
        except FunctionUnavailable:
            self._metrics.invocation(self.spec.name, failed=True)
            raise
        finally:
            self._release(process)
        self._metrics.invocation(self.spec.name, failed=invocation.failed)
        return invocation

    def _too_late(self) -> FunctionUnavailable:
        return FunctionUnavailable(
            f"{self.spec.logical_id} had no free environment in time ({len(self._all)} busy)", True
        )

    def _acquire(self, deadline: float) -> FunctionProcess:
        with self._changed:
            while True:
                while self._idle:
                    process = self._idle.pop()
                    if process.alive():
                        return process
                    self._discard(process)
                if self._cap == 0:
                    raise FunctionUnavailable(f"{self.spec.logical_id} is throttled (reserved concurrency 0)")
                if len(self._all) < self._cap and not self._starting:
                    self._scale_up()
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._changed.wait(remaining):
                    raise self._too_late()

    def _scale_up(self) -> None:
        """Starts one environment in the background; whoever waits takes the first one free."""
        self._starting = True
        process = self._new_process()
        self._all.append(process)
        threading.Thread(target=self._await_ready, args=(process,), daemon=True).start()

    def _await_ready(self, process: FunctionProcess) -> None:
        ready = True
        try:
            process.wait_ready()
        except FunctionUnavailable as exc:
            log.error("%s", exc)
            process.stop()
            ready = False
        with self._changed:
            self._starting = False
            if ready:
                self._idle.append(process)
            else:
                self._discard(process)
            self._changed.notify_all()

    def _release(self, process: FunctionProcess) -> None:
        with self._changed:
            if process.alive():
                self._idle.append(process)
            else:
                # Crashed, or ended itself after a timeout as Lambda ends such an environment.
                log.warning("%s runner ended; the next invocation starts a new one", process.label)
                self._discard(process)
            self._changed.notify()

    def _discard(self, process: FunctionProcess) -> None:
        if process in self._all:
            self._all.remove(process)

    def pids(self) -> dict[str, int]:
        with self._changed:
            return {p.label: p.pid for p in self._all if p.pid is not None}

    def terminate(self) -> None:
        with self._changed:
            processes = list(self._all)
        for process in processes:
            process.terminate()

    def stop(self) -> None:
        with self._changed:
            processes = list(self._all)
        for process in processes:
            process.stop()


class FunctionPool:
    """Every function of the template, started together (their imports overlap) and stopped together."""

    def __init__(
        self,
        specs: Iterable[FunctionSpec],
        moto_url: str,
        region: str,
        sandbox_url: str,
        max_environments: int = DEFAULT_MAX_ENVIRONMENTS,
        *,
        files: LocalFiles | None = None,
        metrics: LocalMetrics | None = None,
    ) -> None:
        self.functions = {
            spec.logical_id: FunctionEnvironments(
                spec,
                runner_environment(spec, moto_url, region, sandbox_url),
                max_environments,
                files,
                metrics,
            )
            for spec in specs
        }

    def start(self) -> None:
        for function in self.functions.values():
            function.start()
        for function in self.functions.values():
            function.wait_ready()

    def __getitem__(self, logical_id: str) -> FunctionEnvironments:
        return self.functions[logical_id]

    def pids(self) -> dict[str, int]:
        return {label: pid for function in self.functions.values() for label, pid in function.pids().items()}

    def stop(self) -> None:
        for function in self.functions.values():
            function.terminate()
        for function in self.functions.values():
            function.stop()
