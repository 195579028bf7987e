"""The state file of a running local stack (``<HERALD_LOCAL_DIR>/stack.json``).

Tools find the local stack through it, as they find a deployed one through its stack outputs:
the CLI reads ``awsEndpoint``, ``region`` and ``outputs``; ``make invoke`` reads ``functions``;
the end-to-end tests read the URLs, ``processes`` and ``demoTenant``. It is removed on shutdown.

Keys: ``pid``, ``startedAt``, ``region``, ``accountId``, ``stackName``, ``awsEndpoint`` (moto),
``ports`` {moto, api, sandbox}, ``gatewayUrl``, ``apiUrl`` (the SDK's baseUrl: the API's origin),
``apiRootUrl`` (the root of the API's routes), ``sandboxUrl``,
``stateDir`` (this folder), ``logFile`` (every process's log lines),
``outputs`` (the template's Outputs, resolved), ``functions`` (per logical id: name, handler,
folders, timeout, memory and the resolved template environment), ``processes`` (label -> pid) and
``demoTenant`` ({tenantId, apiKey, signingSecret}, once created; the secret verifies its webhooks).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from herald_local.config import default_state_dir

STATE_FILE = "stack.json"
# How a tool is told where a stack started with another state folder keeps its state.
FINDING_ANOTHER_STACK = (
    "if it runs with another state folder, pass --local-dir DIR or set HERALD_LOCAL_DIR=DIR"
)
# The template outputs that hold the API's origin (the SDK's baseUrl, to which the SDK adds the
# routes' prefix itself) and the root of its routes (what a client without the SDK calls).
API_URL_OUTPUT = "ApiUrl"
API_ROOT_OUTPUT = "ApiRootUrl"


class StackNotRunning(RuntimeError):
    pass


def state_path(state_dir: Path) -> Path:
    return state_dir / STATE_FILE


def write_state(state_dir: Path, state: dict[str, Any]) -> None:
    """Replaces the file atomically (readers never see half a file), readable by the owner only."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_path(state_dir)
    temporary = path.with_suffix(".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
        json.dump(state, stream, indent=2)
    temporary.replace(path)


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs (another user's process counts as running)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_state(state_dir: Path) -> dict[str, Any]:
    """The state of the running stack; raises StackNotRunning when there is none (or a stale file)."""
    path = state_path(state_dir)
    try:
        state: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise StackNotRunning(
            f"no local stack is running with its state in {state_dir} (no {STATE_FILE}); "
            f"start one with `make run`, or {FINDING_ANOTHER_STACK}"
        ) from exc
    if not process_alive(int(state.get("pid", 0))):
        raise StackNotRunning(
            f"the local stack that wrote {path} is no longer running; "
            f"start one with `make run`, or {FINDING_ANOTHER_STACK}"
        )
    return state


def add_local_dir_option(parser: argparse.ArgumentParser) -> None:
    """``--local-dir DIR``: the one way every tool is told where a stack keeps its state."""
    parser.add_argument(
        "--local-dir",
        type=Path,
        metavar="DIR",
        help="state folder of the running local stack, for one started with another folder "
        "(default: $HERALD_LOCAL_DIR, else .herald-local in the repository)",
    )


def find_running_stack(local_dir: Path | None) -> dict[str, Any]:
    """The state of the stack whose folder is ``local_dir`` (a tool's --local-dir), by default
    HERALD_LOCAL_DIR or the repository's .herald-local; raises StackNotRunning."""
    return read_state((local_dir or default_state_dir()).resolve())


def remove_state(state_dir: Path) -> None:
    state_path(state_dir).unlink(missing_ok=True)
