"""``python -m herald_local [--verbose]`` (``make run``, ``make run ARGS=--verbose``): the whole
stack on this machine, in the foreground.

No AWS account and no Docker: moto stands in for AWS, the template's functions run in local
processes. The console shows one line per API request and per delivery; every process's full log
goes to the state folder's log file, and ``--verbose`` shows it on the console as well. Ctrl-C (or
SIGTERM) stops every process it started, also after an error.
"""

from __future__ import annotations

import time

_STARTED = time.monotonic()  # before the heavy imports: "ready in" counts them too

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import shlex  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from types import FrameType  # noqa: E402

from herald_local.config import ConfigError, LocalConfig  # noqa: E402
from herald_local.demo import DEMO_EMAIL, DemoTenant  # noqa: E402
from herald_local.host.console import ConsoleHandler, configure  # noqa: E402
from herald_local.stack import STARTUP_ERRORS, LocalStack  # noqa: E402
from herald_local.state import state_path  # noqa: E402

log = logging.getLogger("herald_local")

_QUIET_LOGGERS = ("botocore", "boto3", "urllib3", "samtranslator", "werkzeug")


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m herald_local", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show every process's log lines on the console (Lambda START/END/REPORT, JSON logs, metrics)",
    )
    return parser.parse_args(argv)


def _configure_logging() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format="%(message)s",
        handlers=[ConsoleHandler("herald-local")],
        force=True,
    )
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


DEMO_RECIPIENT = "someone@example.com"


def curl_example(api_root: str, api_key: str) -> str:
    body = json.dumps({"to": DEMO_RECIPIENT, "subject": "Hello from Herald", "body": "<p>It works.</p>"})
    return (
        f"curl -s -X POST {api_root}/notifications/email \\\n"
        f"  -H {shlex.quote('X-API-Key: ' + api_key)} -H 'Content-Type: application/json' \\\n"
        f"  -d {shlex.quote(body)}"
    )


def ready_banner(
    *,
    base_url: str,
    api_root: str,
    sandbox_url: str,
    moto_url: str,
    state_file: Path,
    log_file: Path,
    tenant: DemoTenant | None,
    seconds: float,
) -> str:
    """What the console shows once the stack is ready: where everything is, and the demo tenant
    with a request to send as it."""
    lines = [
        "",
        f"  SDK baseUrl      {base_url}  (the SDK adds {api_root.removeprefix(base_url)} itself)",
        f"  API root         {api_root}",
        f"  API docs         {api_root}/docs",
        f"  Console          {base_url}/console  (sign up; the code arrives in the sandbox mailbox)",
        f"  Sandbox mailbox  {sandbox_url}/",
        f"  AWS (moto)       {moto_url}",
        f"  State file       {state_file}",
        f"  Full logs        {log_file}  (or run with --verbose)",
    ]
    if tenant is None:
        lines.append("  Demo tenant      not created (see the warnings above)")
    else:
        lines += [
            f"  Demo tenant      {tenant.tenant_id}",
            f"  Demo API key     {tenant.api_key}",
            f"  Demo sign-in     {DEMO_EMAIL} at {base_url}/console/signin  (its jobs, in the console)",
            f"  Signing secret   {tenant.signing_secret or 'not created (see the warnings above)'}",
            "",
            f"Send an email to {DEMO_RECIPIENT} (it lands in the sandbox mailbox):",
            "",
            curl_example(api_root, tenant.api_key),
        ]
    lines += ["", f"Herald local stack ready in {seconds:.1f} s", ""]
    return "\n".join(lines)


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _run(stack: LocalStack) -> int:
    stack.start()
    stack.create_demo_tenant()
    banner = ready_banner(
        base_url=stack.base_url,
        api_root=stack.api_root,
        sandbox_url=stack.config.sandbox_url,
        moto_url=stack.config.moto_url,
        state_file=state_path(stack.config.state_dir),
        log_file=stack.config.log_path,
        tenant=stack.demo_tenant,
        seconds=time.monotonic() - _STARTED,
    )
    print(banner, flush=True)
    while True:
        time.sleep(0.5)
        failure = stack.failure()
        if failure is not None:
            log.error("the local stack cannot go on: %s", failure)
            return 1


def main(argv: list[str] | None = None) -> int:
    arguments = _arguments(argv)
    _configure_logging()
    # Set explicitly: a shell starting us in the background would have SIGINT ignored.
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        config = LocalConfig.from_env()
    except ConfigError as exc:
        log.error("%s", exc)
        return 2
    configure(verbose=arguments.verbose, log_path=config.log_path)
    stack = LocalStack(config)
    try:
        return _run(stack)
    except KeyboardInterrupt:
        log.info("stopping")
        return 0
    except ConfigError as exc:
        log.error("%s", exc)
        return 2
    except STARTUP_ERRORS as exc:
        log.error("the local stack could not start: %s", exc)
        return 1
    finally:
        # A second Ctrl-C must not cut the shutdown short and leave processes behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stack.stop()
        log.info("stopped")


if __name__ == "__main__":
    sys.exit(main())
