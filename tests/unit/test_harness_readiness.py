"""The harness waits for a starting stack as long as it keeps writing, and no longer once it falls
silent or exits: a slow machine stretches a start, a stuck stack does not hold the tests forever.
Stand-in stacks here are small scripts writing as ``python -m herald_local`` does (its console, its
log, the state file)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from herald_harness.running_stack import READY_LINE, RunningStack, StackDidNotStart, wait_until_ready
from herald_local.config import LOG_FILE_NAME

IDLE_SECONDS = 1.0


def stand_in(state_dir: Path, script: str) -> RunningStack:
    console_file = state_dir / "console.txt"
    with console_file.open("wb") as console:
        process = subprocess.Popen(
            [sys.executable, "-c", script, str(state_dir)], stdout=console, stderr=console
        )
    return RunningStack(process, state_dir, console_file, {})


def ended(stack: RunningStack) -> None:
    if stack.process.poll() is None:
        stack.process.kill()
    stack.process.wait()


def test_a_start_longer_than_the_idle_period_is_awaited_while_it_keeps_writing(tmp_path: Path) -> None:
    # Three times the idle period in all, each silence a third of it; then ready, as the stack says.
    stack = stand_in(
        tmp_path,
        f"""import json, sys, time
from pathlib import Path
log = Path(sys.argv[1]) / {LOG_FILE_NAME!r}
for step in range(9):
    time.sleep({IDLE_SECONDS / 3})
    with log.open("a") as out:
        out.write(f"step {{step}}\\n")
(Path(sys.argv[1]) / "stack.json").write_text(json.dumps({{"demoTenant": None}}))
print({READY_LINE!r}, flush=True)
time.sleep(60)
""",
    )
    started = time.monotonic()
    try:
        wait_until_ready(stack, idle_seconds=IDLE_SECONDS)
        assert time.monotonic() - started > 3 * IDLE_SECONDS
        assert stack.state == {"demoTenant": None}
    finally:
        ended(stack)


def test_a_silent_start_is_killed_after_the_idle_period_with_its_log(tmp_path: Path) -> None:
    stack = stand_in(
        tmp_path, "import sys, time\nprint('starting: moto serving', flush=True)\ntime.sleep(60)"
    )
    try:
        with pytest.raises(StackDidNotStart, match=r"wrote nothing for 1 s while starting") as failed:
            wait_until_ready(stack, idle_seconds=IDLE_SECONDS)
        assert stack.process.poll() is not None
        assert "starting: moto serving" in str(failed.value)
    finally:
        ended(stack)


def test_a_stack_that_exits_while_starting_fails_at_once_with_its_status(tmp_path: Path) -> None:
    stack = stand_in(tmp_path, "import sys\nprint('port 3000 is already in use', flush=True)\nsys.exit(2)")
    try:
        with pytest.raises(StackDidNotStart, match=r"exited with status 2:\nport 3000 is already in use"):
            wait_until_ready(stack, idle_seconds=60)
    finally:
        ended(stack)


def test_the_state_file_alone_is_not_ready_until_the_demo_tenant_or_the_ready_line(tmp_path: Path) -> None:
    state = {"demoTenant": {"tenantId": "t", "apiKey": "hk_x"}}
    stack = stand_in(
        tmp_path,
        f"""import json, sys, time
from pathlib import Path
state = Path(sys.argv[1]) / "stack.json"
state.write_text(json.dumps({{"demoTenant": None}}))
print("starting: the API on http://127.0.0.1:1", flush=True)
time.sleep({IDLE_SECONDS / 2})
state.write_text({json.dumps(state)!r})
time.sleep(60)
""",
    )
    try:
        wait_until_ready(stack, idle_seconds=IDLE_SECONDS)
        assert stack.state == state
    finally:
        ended(stack)
