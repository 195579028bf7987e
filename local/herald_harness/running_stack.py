"""The local stack as a developer runs it: ``python -m herald_local`` as a subprocess on free ports,
with its own state folder, ready to be driven over HTTP as a client would and with the operator CLI
as an operator would.

The stack binds its ports itself (port 0: any free port) and its state file says which, so no port
is chosen here and taken by another program before the stack binds it. Its start is awaited as
long as it makes progress, however slow a busy machine makes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from herald_harness.inbound_signers import payment_environment
from herald_local.aws.clients import moto_client
from herald_local.aws.server import READY_TIMEOUT_SECONDS as MOTO_READY_TIMEOUT_SECONDS
from herald_local.config import LOG_FILE_NAME, project_root
from herald_local.state import process_alive

# A starting stack writes as it goes (a line per step, each function environment, moto's and the
# functions' output); one silent this long is stuck. Longer than the longest silent step, moto's
# start, which the stack bounds itself: a step that fails says so in the stack's own words.
READY_IDLE_SECONDS = MOTO_READY_TIMEOUT_SECONDS + 60.0
STOP_TIMEOUT_SECONDS = 30.0
READY_LINE = "Herald local stack ready in"
CLI_TIMEOUT_SECONDS = 60


class StackDidNotStart(RuntimeError):
    """The stack exited, or stopped writing before it was ready; the message ends with its log's last
    lines."""


def without_local_dir() -> dict[str, str]:
    """This environment without HERALD_LOCAL_DIR: tools must find the stack by --local-dir."""
    return {name: value for name, value in os.environ.items() if name != "HERALD_LOCAL_DIR"}


@dataclass
class RunningStack:
    process: subprocess.Popen[bytes]
    state_dir: Path
    console_file: Path  # what a developer sees in the terminal
    state: dict[str, Any]

    @property
    def base_url(self) -> str:
        """What a NotifyKit SDK user sets as ``baseUrl``: the API's origin."""
        return str(self.state["apiUrl"])

    @property
    def api_root(self) -> str:
        """The root of the API's routes (``base_url`` + /api/v1), for calls without the SDK."""
        return str(self.state["apiRootUrl"])

    @property
    def sandbox_url(self) -> str:
        return str(self.state["sandboxUrl"])

    @property
    def moto_url(self) -> str:
        return str(self.state["awsEndpoint"])

    @property
    def outputs(self) -> dict[str, str]:
        return dict(self.state["outputs"])

    @property
    def demo_tenant_id(self) -> str | None:
        tenant = self.state.get("demoTenant")
        return None if tenant is None else str(tenant["tenantId"])

    @property
    def demo_api_key(self) -> str | None:
        tenant = self.state.get("demoTenant")
        return None if tenant is None else str(tenant["apiKey"])

    @property
    def child_pids(self) -> dict[str, int]:
        """moto's and every function runner's PID (the sandbox runs inside the stack's process)."""
        return {label: int(pid) for label, pid in self.state["processes"].items()}

    def boto3_client(self, service: str) -> Any:
        return moto_client(service, self.moto_url, self.state["region"], read_timeout=20)

    def herald(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The operator CLI, run as an operator runs it, against this stack."""
        return subprocess.run(
            [str(Path(sys.executable).with_name("herald")), "--local-dir", str(self.state_dir), *args],
            env=without_local_dir(),
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_SECONDS,
            check=False,
        )

    def cli(self, *args: str) -> str:
        """The operator CLI's output for ``herald --local-dir <this stack> <args>``; it must succeed."""
        finished = self.herald(*args)
        assert finished.returncode == 0, finished.stderr
        return finished.stdout

    def create_tenant(self, plan: str = "startup", name: str = "E2E") -> tuple[str, str]:
        """A tenant of the calling test's own, made with the operator CLI as an operator would:
        (tenant id, API key)."""
        created = json.loads(
            self.cli(
                "tenant",
                "create",
                "--name",
                name,
                "--email",
                f"{name.lower()}@example.com",
                "--plan",
                plan,
                "--json",
            )
        )
        return str(created["tenantId"]), str(created["apiKey"])

    @property
    def log_file(self) -> Path:
        """The stack's full log: every line of every process it runs."""
        return self.state_dir / LOG_FILE_NAME

    def console(self) -> str:
        return self.console_file.read_text(errors="replace")

    def log_tail(self, lines: int = 60) -> str:
        full = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
        return "\n".join((full or self.console()).splitlines()[-lines:])

    def stop_cleanly(self) -> None:
        """Ctrl-C, as a developer stops ``make run``; asserts the stack exited 0, every child process
        is gone and the state file removed."""
        pids = self.child_pids
        self.process.send_signal(signal.SIGINT)
        status = self.process.wait(STOP_TIMEOUT_SECONDS)
        assert status == 0, self.log_tail()
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        while time.monotonic() < deadline and any(process_alive(pid) for pid in pids.values()):
            time.sleep(0.1)
        assert not {label: pid for label, pid in pids.items() if process_alive(pid)}, (
            "child processes left running"
        )
        assert not (self.state_dir / "stack.json").exists()


def _read_state(state_file: Path) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads(state_file.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return state


def _environment(state_dir: Path, extra_env: dict[str, str] | None) -> dict[str, str]:
    return {
        **os.environ,
        "HERALD_LOCAL_DIR": str(state_dir),
        # Bound by the stack, any free ones: the state file says which.
        "HERALD_MOTO_PORT": "0",
        "HERALD_API_PORT": "0",
        "HERALD_SANDBOX_PORT": "0",
        "HERALD_LOCAL_RETRY_BASE_DELAY": "2",
        "HERALD_LOCAL_BREAKER_COOLDOWN_SECONDS": "2",
        # Every test's browser signs in from 127.0.0.1: the per-client hourly allowance of codes
        # would be shared by all the suite's sign-ups on a worker.
        "HERALD_LOCAL_SIGNIN_CODES_PER_CLIENT": "1000",
        "AWS_DEFAULT_REGION": "us-east-1",
        # The payment processors' test-only secrets and plans, so tests can sign as Polar and Paystack.
        **payment_environment(),
        **(extra_env or {}),
    }


def start_stack(state_dir: Path, extra_env: dict[str, str] | None = None) -> RunningStack:
    """Starts a stack and returns once it is ready (demo tenant created or the ready line printed)."""
    console_file = state_dir / "console.txt"
    with console_file.open("wb") as console:
        process = subprocess.Popen(
            [sys.executable, "-m", "herald_local"],
            cwd=project_root(),
            env=_environment(state_dir, extra_env),
            stdout=console,
            stderr=console,
        )
    stack = RunningStack(process, state_dir, console_file, {})
    wait_until_ready(stack)
    return stack


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


class _Silence:
    """How long a stack has written nothing, to its console or to its log."""

    def __init__(self, stack: RunningStack) -> None:
        self._stack = stack
        self._written = self._now_written()
        self._since = time.monotonic()

    def _now_written(self) -> tuple[int, int]:
        return _size(self._stack.console_file), _size(self._stack.log_file)

    def seconds(self) -> float:
        written = self._now_written()
        if written != self._written:
            self._written, self._since = written, time.monotonic()
        return time.monotonic() - self._since


def _ready_state(stack: RunningStack) -> dict[str, Any] | None:
    """The state file once the stack is ready (demo tenant created, or the ready line printed)."""
    state = _read_state(stack.state_dir / "stack.json")
    if state is not None and (state.get("demoTenant") or READY_LINE in stack.console()):
        return state
    return None


def wait_until_ready(stack: RunningStack, idle_seconds: float = READY_IDLE_SECONDS) -> None:
    """Waits while the stack runs and keeps writing, however long that takes; kills it once it has
    been silent for ``idle_seconds``."""
    started, silence = time.monotonic(), _Silence(stack)
    while (state := _ready_state(stack)) is None:
        if stack.process.poll() is not None:
            raise StackDidNotStart(
                f"the local stack exited with status {stack.process.returncode}:\n{stack.log_tail()}"
            )
        if silence.seconds() > idle_seconds:
            stack.process.kill()
            stack.process.wait()
            raise StackDidNotStart(
                f"the local stack wrote nothing for {idle_seconds:.0f} s while starting "
                f"(killed {time.monotonic() - started:.0f} s after its start):\n{stack.log_tail()}"
            )
        time.sleep(0.2)
    stack.state = state
