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
import logging  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from types import FrameType  # noqa: E402

from herald_local.config import ConfigError, LocalConfig  # noqa: E402
from herald_local.console import ConsoleHandler, configure, ready_banner  # noqa: E402
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
