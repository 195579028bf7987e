"""``python -m herald_local.invoke <LogicalId> <event.json>`` (``make invoke``): runs one function
of the template once, on one event, against the running local stack, like ``sam local invoke``.

The function gets a fresh runner with the environment the stack resolved for it; its logs go to
stderr, the handler's result to stdout as JSON. Exit status: 0 on success, 1 on a function error,
2 when the stack is not running or the arguments are wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from herald_local.functions import FunctionProcess, FunctionUnavailable, runner_environment
from herald_local.state import StackNotRunning, add_local_dir_option, find_running_stack
from herald_local.topology import FunctionSpec


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m herald_local.invoke", description=__doc__)
    parser.add_argument("function", help="logical id of the function in template.yaml, e.g. ApiFunction")
    parser.add_argument("event", type=Path, help="JSON event file, e.g. events/api/ping.json")
    add_local_dir_option(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    try:
        state = find_running_stack(args.local_dir)
    except StackNotRunning as exc:
        print(f"herald_local.invoke: {exc}", file=sys.stderr)
        return 2
    functions = state["functions"]
    if args.function not in functions:
        print(
            f"herald_local.invoke: no function {args.function}; the template has {', '.join(sorted(functions))}",
            file=sys.stderr,
        )
        return 2
    try:
        event = json.loads(args.event.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"herald_local.invoke: cannot read the event {args.event}: {exc}", file=sys.stderr)
        return 2
    spec = FunctionSpec.from_dict(functions[args.function])
    process = FunctionProcess(
        spec, runner_environment(spec, state["awsEndpoint"], state["region"], state["sandboxUrl"]), sys.stderr
    )
    process.start()
    try:
        process.wait_ready()
        invocation = process.invoke(event)
    except FunctionUnavailable as exc:
        print(f"herald_local.invoke: {exc}", file=sys.stderr)
        return 1
    finally:
        process.stop()
    print(json.dumps(invocation.document(), indent=2))
    return 1 if invocation.failed else 0


if __name__ == "__main__":
    sys.exit(main())
