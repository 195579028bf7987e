"""The README's walk-through, as a newcomer runs it: its shell block, copied command by command,
with the demo key the banner printed pasted in and the stack's ports for the default ones."""

from __future__ import annotations

import json
import re
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from herald_local.config import project_root
from tests.e2e.conftest import wait_for

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

SECTION = "## Try it (local stack)"
DEFAULT_API = "http://127.0.0.1:3000"
DEFAULT_SANDBOX = "http://127.0.0.1:3100"
# Printed between commands, so each command's output can be told apart.
MARKER = "----- next command -----"
TIMEOUT_SECONDS = 120


def walkthrough_commands() -> list[str]:
    """The commands of the section's first shell block; continued lines kept together."""
    readme = (project_root() / "README.md").read_text(encoding="utf-8")
    section = readme.split(SECTION, 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None
    commands: list[str] = []
    pending = ""
    for line in block.group(1).splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line + "\n"
        if not line.endswith("\\"):
            commands.append(pending)
            pending = ""
    return commands


def printed_key(stack: RunningStack) -> str:
    found = re.search(r"Demo API key +(hk_[0-9a-f]{64})", stack.console())
    assert found is not None, stack.console()
    return found.group(1)


def run(commands: list[str]) -> list[str]:
    """Runs the commands in one shell, in order, stopping at the first that fails; their outputs."""
    script = "set -euo pipefail\n" + "".join(f"{command}echo '{MARKER}'\n" for command in commands)
    finished = subprocess.run(
        ["bash", "-c", script],
        cwd=project_root(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    return [output.strip() for output in finished.stdout.split(MARKER + "\n")][: len(commands)]


def _pasted(command: str, stack: RunningStack, key: str) -> str:
    """What the newcomer's copy becomes: their key, and this stack's ports for the defaults."""
    command = re.sub(r"^KEY=hk_\.\.\.", f"KEY={key}", command)
    return command.replace(DEFAULT_API, stack.base_url).replace(DEFAULT_SANDBOX, stack.sandbox_url)


def _json_after(outputs: dict[str, str], fragment: str) -> Any:
    """The output of the one command that contains ``fragment``, as JSON."""
    (output,) = [output for command, output in outputs.items() if fragment in command]
    return json.loads(output)


def test_the_readme_walkthrough_runs_as_written(local_stack: RunningStack) -> None:
    """Given the key the banner printed, When each command of the README's walk-through runs in
    order, Then each succeeds and shows what its comment promises: pong, the job, the listing, the
    accepted webhook, and in the sandbox the email and the webhook with valid signatures."""
    commands = walkthrough_commands()
    assert commands[0].startswith("KEY=hk_...")
    pasted = [_pasted(command, local_stack, printed_key(local_stack)) for command in commands]
    outputs = dict(zip(pasted, run(pasted), strict=True))

    assert _json_after(outputs, "$API/ping")["data"] == {"message": "pong"}
    job = _json_after(outputs, "$API/notifications/jobs/$JOB")["data"]
    assert job["type"] == "email"
    listing = _json_after(outputs, "$API/notifications/jobs?")["data"]
    assert job["id"] in [summary["id"] for summary in listing["data"]]
    webhook = _json_after(outputs, "$API/notifications/webhook")["data"]
    assert (webhook["type"], webhook["status"]) == ("webhook", "pending")

    # Deliveries take a moment: the sandbox lines, run again with the same job, show them once there.
    sandbox = [command for command in pasted if "/_sandbox/" in command]
    assert len(sandbox) == 2

    def received() -> list[Any] | None:
        seen = [json.loads(output) for output in run([f"JOB={job['id']}\n", *sandbox])[1:]]
        hooks = [hook for hook in seen[1] if hook["jobId"] == webhook["jobId"]]
        return [seen[0], hooks] if seen[0] and hooks else None

    messages, hooks = wait_for(received, "the sandbox to receive the email and the webhook", timeout=60)
    assert [message["jobId"] for message in messages] == [job["id"]]
    assert hooks[0]["signatures"] == {"notifykit": True, "standard": True}
