"""The template's functions, each in its own runner process, invoked through the Lambda Invoke API."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

import urllib3

from herald_local.moto_clients import FAKE_CREDENTIALS
from herald_local.processes import ChildProcess, python_module
from herald_local.runner import FUNCTION_ERROR_HEADER, READY_MARKER, REQUEST_ID_HEADER
from herald_local.topology import FunctionSpec

log = logging.getLogger(__name__)

_READY_TIMEOUT_SECONDS = 60.0
# Room past the function timeout for the runner to answer with its own timeout error.
_ANSWER_MARGIN_SECONDS = 5.0
_http = urllib3.PoolManager(maxsize=64, retries=False)

# Only local tooling reads these; the template never sets them, so deployed stacks never do.
LOCAL_ONLY_ENVIRONMENT = {
    "HERALD_AWS_MAX_ATTEMPTS": "1",
    "HERALD_ALLOW_LOOPBACK_WEBHOOKS": "true",
}
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


def runner_environment(spec: FunctionSpec, moto_url: str, region: str) -> dict[str, str]:
    """Exactly the template's environment for the function, plus what Lambda and the local stack add."""
    base = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    return {
        **base,
        **spec.environment,
        **FAKE_CREDENTIALS,
        **LOCAL_ONLY_ENVIRONMENT,
        # Keep a developer's ~/.aws settings (profiles, endpoints, retries) out of the functions.
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_ENDPOINT_URL": moto_url,
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "AWS_LAMBDA_FUNCTION_NAME": spec.name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{spec.name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "local/[$LATEST]herald-local",
        "LAMBDA_TASK_ROOT": spec.code_dir,
        "_HANDLER": spec.handler,
        "TZ": ":UTC",
        "PYTHONUNBUFFERED": "1",
    }


def _runner_argv(spec: FunctionSpec) -> list[str]:
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
    return python_module("herald_local.runner", *arguments)


class FunctionProcess:
    """One function's runner; restarted on the next invocation if it died, as Lambda replaces environments."""

    def __init__(
        self, spec: FunctionSpec, environment: Mapping[str, str], console: TextIO | None = None
    ) -> None:
        self.spec = spec
        self._environment = dict(environment)
        self._console = console
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._port: int | None = None
        self._child: ChildProcess | None = None

    def _on_line(self, line: str) -> bool:
        if self._port is None and line.startswith(READY_MARKER):
            self._port = int(line.split()[1])
            self._ready.set()
            return True
        return False

    def start(self) -> None:
        self._port = None
        self._ready.clear()
        self._child = ChildProcess(
            self.spec.logical_id,
            _runner_argv(self.spec),
            env=self._environment,
            line_filter=self._on_line,
            console=self._console,
        )
        self._child.start()

    def wait_ready(self, timeout: float = _READY_TIMEOUT_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.05):
            code = None if self._child is None else self._child.exit_code()
            if code is not None or time.monotonic() > deadline:
                raise FunctionUnavailable(f"{self.spec.logical_id} runner did not start (exit status {code})")

    @property
    def pid(self) -> int | None:
        return None if self._child is None else self._child.pid

    def terminate(self) -> None:
        if self._child is not None:
            self._child.terminate()

    def stop(self) -> None:
        if self._child is not None:
            self._child.stop()

    def _url(self) -> str:
        with self._lock:
            if self._child is None or not self._child.alive():
                log.warning("%s runner is not running; starting a new one", self.spec.logical_id)
                self.start()
                self.wait_ready()
            return f"http://127.0.0.1:{self._port}/2015-03-31/functions/{self.spec.name}/invocations"

    def invoke(self, event: Any, timeout: float | None = None) -> Invocation:
        """Invokes synchronously; ``timeout`` bounds the wait below the function's own timeout."""
        limit = self.spec.timeout_seconds + _ANSWER_MARGIN_SECONDS if timeout is None else timeout
        try:
            response = _http.request(
                "POST",
                self._url(),
                body=json.dumps(event).encode(),
                headers={"Content-Type": "application/json"},
                timeout=urllib3.Timeout(connect=2.0, read=limit),
            )
        except urllib3.exceptions.ReadTimeoutError as exc:
            raise FunctionUnavailable(
                f"{self.spec.logical_id} did not answer within {limit:.0f} s", True
            ) from exc
        except urllib3.exceptions.HTTPError as exc:
            raise FunctionUnavailable(f"{self.spec.logical_id} runner is unreachable: {exc}") from exc
        if response.status != 200:
            raise FunctionUnavailable(
                f"{self.spec.logical_id} runner refused the event (HTTP {response.status})"
            )
        return Invocation(
            request_id=response.headers.get(REQUEST_ID_HEADER, ""),
            payload=response.data,
            function_error=response.headers.get(FUNCTION_ERROR_HEADER),
        )


class FunctionPool:
    """Every function of the template, started together (their imports overlap) and stopped together."""

    def __init__(self, specs: Iterable[FunctionSpec], moto_url: str, region: str) -> None:
        self.processes = {
            spec.logical_id: FunctionProcess(spec, runner_environment(spec, moto_url, region))
            for spec in specs
        }

    def start(self) -> None:
        for process in self.processes.values():
            process.start()
        for process in self.processes.values():
            process.wait_ready()

    def __getitem__(self, logical_id: str) -> FunctionProcess:
        return self.processes[logical_id]

    def pids(self) -> dict[str, int]:
        return {name: process.pid for name, process in self.processes.items() if process.pid is not None}

    def stop(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            process.stop()
