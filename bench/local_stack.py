"""The local stack as the benchmarks drive it: started in a folder of its own, stopped cleanly,
with tenants the operator exempted from rate limits and quotas (a benchmark measures the stack,
not the plans' limits)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from herald_harness.running_stack import RunningStack, start_stack

UNLIMITED = "1000000"


@contextmanager
def local_stack() -> Iterator[RunningStack]:
    """The stack's state folder (its log among it) is removed after a run and kept after a failure."""
    state_dir = Path(tempfile.mkdtemp(prefix="herald-bench-"))
    stack = start_stack(state_dir)
    try:
        yield stack
    except BaseException:
        print(f"the local stack's state folder and log are kept in {state_dir}", file=sys.stderr)
        raise
    finally:
        stack.stop_cleanly()
    shutil.rmtree(state_dir)


def unlimited_tenant(stack: RunningStack, name: str) -> tuple[str, str]:
    """A startup-plan tenant made with the operator CLI, its quota and rate limit raised by it too:
    (tenant id, API key)."""
    tenant_id, key = stack.create_tenant(plan="startup", name=name)
    stack.cli("tenant", "set-limit", tenant_id, UNLIMITED, "--rate", UNLIMITED)
    return tenant_id, key
