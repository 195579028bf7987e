"""One Lambda function in its own process, run as ``python -m herald_local.awslambda.runner``.

It sets up the function as the Python runtime does (the CodeUri folder, then each layer folder on
``sys.path``, the handler imported once at init) and serves the Lambda Invoke API
(``POST /2015-03-31/functions/<name>/invocations``) on a loopback port. Like a Lambda execution
environment it runs one invocation at a time (handlers keep per-environment state, such as
Powertools' resolver, that two invocations at once would share); the stack runs several runners
to serve invocations in parallel. A handler error comes back as Lambda's error document with
``X-Amz-Function-Error: Unhandled``; it is logged and never ends the process. A timeout does: the
handler's thread cannot be stopped, and Lambda also replaces an environment after a timeout.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import sys
import threading
import time
import traceback
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from herald_local.aws.function_calls import calls_file, watch_process
from herald_local.config import LOOPBACK
from herald_local.host.processes import watch_parent

READY_MARKER = "HERALD_RUNNER_LISTENING"
INVOKE_PATH_PREFIX = "/2015-03-31/functions/"
FUNCTION_ERROR_HEADER = "X-Amz-Function-Error"
REQUEST_ID_HEADER = "X-Amzn-RequestId"
# Local only: tells the caller this runner ends after the answer, so it is never handed the next one.
ENVIRONMENT_ENDS_HEADER = "X-Herald-Environment-Ends"

Handler = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class RunnerOptions:
    function_name: str
    function_arn: str
    handler: str
    code_dir: str
    layer_dirs: tuple[str, ...]
    timeout_seconds: int
    memory_mb: int
    # Where the process records the AWS calls it makes, and the faults file it obeys (local only).
    aws_calls_dir: Path | None = None
    faults_file: Path | None = None


class LambdaContext:
    """The context object of the Python runtime (awslambdaric), with the same attribute types."""

    def __init__(self, options: RunnerOptions, request_id: str) -> None:
        self.aws_request_id = request_id
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", options.function_name)
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", str(options.memory_mb))
        self.invoked_function_arn = options.function_arn
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME")
        self.identity = None
        self.client_context = None
        self._deadline_ms = int(time.time() * 1000) + options.timeout_seconds * 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(self._deadline_ms - int(time.time() * 1000), 0)


class InitError(Exception):
    """The handler could not be loaded; every invocation answers with this error, as Lambda does."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.document = {"errorMessage": message, "errorType": error_type, "stackTrace": []}


def load_handler(handler: str) -> Handler:
    module_name, _, function_name = handler.rpartition(".")
    if not module_name:
        raise InitError("Runtime.MalformedHandlerName", f"Bad handler '{handler}': expected module.function")
    try:
        module = importlib.import_module(module_name.replace("/", "."))
    except ImportError as exc:
        raise InitError(
            "Runtime.ImportModuleError", f"Unable to import module '{module_name}': {exc}"
        ) from exc
    except SyntaxError as exc:
        raise InitError(
            "Runtime.UserCodeSyntaxError", f"Syntax error in module '{module_name}': {exc}"
        ) from exc
    function = getattr(module, function_name, None)
    if not callable(function):
        raise InitError(
            "Runtime.HandlerNotFound", f"Handler '{function_name}' missing on module '{module_name}'"
        )
    loaded: Handler = function
    return loaded


def error_document(exc: BaseException, request_id: str) -> dict[str, Any]:
    # The first frame is the runner's own call into the handler; Lambda's trace starts in user code.
    frames = traceback.extract_tb(exc.__traceback__)[1:]
    return {
        "errorMessage": str(exc),
        "errorType": type(exc).__name__,
        "requestId": request_id,
        "stackTrace": traceback.format_list(frames),
    }


def _max_memory_mb() -> int:
    used = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is in KiB on Linux and in bytes on macOS.
    return int(used / (1024 * 1024) if sys.platform == "darwin" else used / 1024)


@dataclass
class _Outcome:
    result: Any = None
    error: BaseException | None = None
    done: bool = False


class FunctionHost:
    """Runs invocations of one handler, each in its own thread, bounded by the function timeout."""

    def __init__(self, options: RunnerOptions) -> None:
        self.options = options
        self.handler: Handler | None = None
        self.init_error: InitError | None = None
        self.timed_out = False
        self._one_at_a_time = threading.Lock()

    def init(self) -> None:
        # Powertools warns on every invocation that emits no business metric (most API routes): one
        # line of noise per request, which Lambda would bury in CloudWatch but a console shows.
        warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)
        sys.path[:0] = [self.options.code_dir, *self.options.layer_dirs]
        os.chdir(self.options.code_dir)
        try:
            self.handler = load_handler(self.options.handler)
        except InitError as exc:
            self.init_error = exc
            print(f"[ERROR] {exc.document['errorType']}: {exc}", file=sys.stderr, flush=True)
        except Exception as exc:  # noqa: BLE001 - any init failure is reported, as Lambda reports it
            self.init_error = InitError(type(exc).__name__, str(exc))
            traceback.print_exc()

    def invoke(self, event: Any, request_id: str) -> tuple[Any, bool]:
        """The response document and whether it is a function error."""
        with self._one_at_a_time:
            return self._invoke_alone(event, request_id)

    def _invoke_alone(self, event: Any, request_id: str) -> tuple[Any, bool]:
        if self.init_error is not None:
            return {**self.init_error.document, "requestId": request_id}, True
        assert self.handler is not None
        outcome = _Outcome()
        context = LambdaContext(self.options, request_id)
        worker = threading.Thread(target=self._run, args=(event, context, outcome), daemon=True)
        worker.start()
        worker.join(self.options.timeout_seconds)
        if not outcome.done:
            self.timed_out = True
            message = f"RequestId: {request_id} Error: Task timed out after {self.options.timeout_seconds:.2f} seconds"
            print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {message}", flush=True)
            return {"errorType": "Sandbox.Timedout", "errorMessage": message}, True
        if outcome.error is not None:
            document = error_document(outcome.error, request_id)
            print(f"[ERROR] {document['errorType']}: {document['errorMessage']}", file=sys.stderr, flush=True)
            traceback.print_exception(outcome.error, file=sys.stderr)
            return document, True
        return outcome.result, False

    def _run(self, event: Any, context: LambdaContext, outcome: _Outcome) -> None:
        assert self.handler is not None
        try:
            outcome.result = self.handler(event, context)
        except Exception as exc:  # noqa: BLE001 - a handler error is the function's answer, not ours
            outcome.error = exc
        finally:
            outcome.done = True


def _serialize(document: Any, request_id: str) -> tuple[bytes, bool]:
    try:
        return json.dumps(document).encode(), False
    except (TypeError, ValueError) as exc:
        error = {
            "errorMessage": f"Unable to marshal response: {exc}",
            "errorType": "Runtime.MarshalError",
            "requestId": request_id,
            "stackTrace": [],
        }
        return json.dumps(error).encode(), True


class _InvokeHandler(BaseHTTPRequestHandler):
    # Headers and body leave in two writes; with Nagle on, the peer's delayed ACK holds the body ~40 ms.
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"
    host: FunctionHost

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's name
        """Invocations are logged as START/END/REPORT lines instead of an access log."""

    def do_POST(self) -> None:  # noqa: N802 - BaseHTTPRequestHandler's naming
        if not self.path.startswith(INVOKE_PATH_PREFIX) or not self.path.endswith("/invocations"):
            self._answer(HTTPStatus.NOT_FOUND, b'{"message":"Not Found"}', None)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            event = json.loads(body or b"{}")
        except json.JSONDecodeError:
            self._answer(
                HTTPStatus.BAD_REQUEST,
                b'{"Type":"User","message":"Could not parse request body into json"}',
                None,
            )
            return
        request_id = str(uuid.uuid4())
        payload, failed = self._invoke(event, request_id)
        self._answer(HTTPStatus.OK, payload, request_id, failed)
        if self.host.timed_out:
            # The timed-out handler still runs in its thread; ending the process is the only way
            # to keep it from overlapping the next invocation. The stack starts a fresh runner.
            print("the environment ends after the timeout, as Lambda's does", flush=True)
            os._exit(0)

    def _invoke(self, event: Any, request_id: str) -> tuple[bytes, bool]:
        options = self.host.options
        print(f"START RequestId: {request_id} Version: $LATEST", flush=True)
        started = time.perf_counter()
        document, failed = self.host.invoke(event, request_id)
        payload, marshal_failed = _serialize(document, request_id)
        duration_ms = (time.perf_counter() - started) * 1000
        print(f"END RequestId: {request_id}", flush=True)
        print(
            f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
            f"Memory Size: {options.memory_mb} MB\tMax Memory Used: {_max_memory_mb()} MB",
            flush=True,
        )
        return payload, failed or marshal_failed

    def _answer(
        self, status: HTTPStatus, payload: bytes, request_id: str | None, failed: bool = False
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        if request_id is not None:
            self.send_header(REQUEST_ID_HEADER, request_id)
        if failed:
            self.send_header(FUNCTION_ERROR_HEADER, "Unhandled")
        if self.host.timed_out:
            self.send_header(ENVIRONMENT_ENDS_HEADER, "true")
        self.end_headers()
        self.wfile.write(payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True


def serve(options: RunnerOptions) -> None:
    calls = (
        None if options.aws_calls_dir is None else calls_file(options.aws_calls_dir, options.function_name)
    )
    watch_process(options.function_name, calls, options.faults_file)
    host = FunctionHost(options)
    host.init()
    handler = type("InvokeHandler", (_InvokeHandler,), {"host": host})
    server = _Server((LOOPBACK, 0), handler)
    print(f"{READY_MARKER} {server.server_address[1]}", flush=True)
    server.serve_forever(poll_interval=0.5)


def _options(argv: list[str]) -> RunnerOptions:
    parser = argparse.ArgumentParser(prog="herald_local.awslambda.runner", description=__doc__)
    parser.add_argument("--function-name", required=True)
    parser.add_argument("--function-arn", required=True)
    parser.add_argument("--handler", required=True)
    parser.add_argument("--code-dir", required=True)
    parser.add_argument("--layer-dir", action="append", default=[])
    parser.add_argument("--timeout", type=int, required=True)
    parser.add_argument("--memory", type=int, required=True)
    parser.add_argument("--aws-calls-dir", type=Path)
    parser.add_argument("--faults-file", type=Path)
    args = parser.parse_args(argv)
    return RunnerOptions(
        function_name=args.function_name,
        function_arn=args.function_arn,
        handler=args.handler,
        code_dir=args.code_dir,
        layer_dirs=tuple(args.layer_dir),
        timeout_seconds=args.timeout,
        memory_mb=args.memory,
        aws_calls_dir=args.aws_calls_dir,
        faults_file=args.faults_file,
    )


def main() -> None:
    watch_parent()
    serve(_options(sys.argv[1:]))


if __name__ == "__main__":
    main()
