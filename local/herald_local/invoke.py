"""``python -m herald_local.invoke <LogicalId> <event.json>`` (``make invoke``): runs one function
of the template once, on one event, against the running local stack, like ``sam local invoke``.

The function gets a fresh runner with the environment the stack resolved for it. The handler's
result goes to stdout as JSON, after one line on stderr that says how the invocation went; the
function's own log lines go to the stack's log file, or with ``--verbose`` to stderr, before that
line. Exit status: 0 on success, 1 on a function error, 2 when the stack is not running or the
arguments are wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from herald_local.awslambda.functions import (
    FunctionProcess,
    FunctionUnavailable,
    Invocation,
    LocalFiles,
    runner_environment,
)
from herald_local.cloudformation.topology import FunctionSpec
from herald_local.host.console import configure
from herald_local.state import StackNotRunning, add_local_dir_option, find_running_stack


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m herald_local.invoke", description=__doc__)
    parser.add_argument("function", help="logical id of the function in template.yaml, e.g. ApiFunction")
    parser.add_argument("event", type=Path, help="JSON event file, e.g. events/api/ping.json")
    add_local_dir_option(parser)
    parser.add_argument("--verbose", action="store_true", help="show the function's log lines on stderr")
    return parser.parse_args(argv)


class _Refused(Exception):
    """The invocation cannot start (no stack, unknown function, unreadable event): exit status 2."""


def _function_and_event(args: argparse.Namespace, state: dict[str, Any]) -> tuple[FunctionSpec, Any]:
    try:
        spec = function_spec(state, args.function)
        event = json.loads(args.event.read_text(encoding="utf-8"))
    except KeyError as exc:
        raise _Refused(str(exc.args[0])) from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise _Refused(f"cannot read the event {args.event}: {exc}") from exc
    return spec, event


def invoke_once(spec: FunctionSpec, event: Any, state: dict[str, Any]) -> Invocation:
    """Run the function once on ``event`` in a fresh runner with the environment the stack resolved
    for it (what ``sam local invoke`` does); FunctionUnavailable when it cannot start or answer."""
    environment = runner_environment(spec, state["awsEndpoint"], state["region"], state["sandboxUrl"])
    process = FunctionProcess(spec, environment, files=LocalFiles.in_folder(Path(state["stateDir"])))
    process.start()
    try:
        process.wait_ready()
        return process.invoke(event)
    finally:
        process.stop()  # also waits until every log line of the runner is written


def function_spec(state: dict[str, Any], logical_id: str) -> FunctionSpec:
    functions = state["functions"]
    if logical_id not in functions:
        raise KeyError(f"no function {logical_id}; the template has {', '.join(sorted(functions))}")
    return FunctionSpec.from_dict(functions[logical_id])


def _invoke(spec: FunctionSpec, event: Any, state: dict[str, Any], verbose: bool) -> int:
    log_file = Path(state["logFile"])
    configure(verbose=verbose, log_path=log_file, console=sys.stderr)
    started = time.perf_counter()
    try:
        invocation = invoke_once(spec, event, state)
    except FunctionUnavailable as exc:
        print(f"herald_local.invoke: {exc}", file=sys.stderr)
        return 1
    outcome = f"failed ({invocation.function_error})" if invocation.failed else "answered"
    where = "above" if verbose else f"in {log_file}"
    seconds = time.perf_counter() - started
    # The last line on stderr, so the result below never runs into the function's log lines.
    print(
        f"{spec.logical_id} {outcome} in {seconds:.1f} s (start included); its log lines are {where}",
        file=sys.stderr,
        flush=True,
    )
    print(json.dumps(invocation.document(), indent=2))
    return 1 if invocation.failed else 0


def main(argv: list[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    try:
        state = find_running_stack(args.local_dir)
        spec, event = _function_and_event(args, state)
    except (StackNotRunning, _Refused) as exc:
        print(f"herald_local.invoke: {exc}", file=sys.stderr)
        return 2
    return _invoke(spec, event, state, args.verbose)


if __name__ == "__main__":
    sys.exit(main())
