"""Cold import time of each function, next to a bare ``import boto3``.

``python -m bench.cold_imports``: each figure is the fastest of fresh interpreters (the one least
disturbed by whatever else the machine runs), in CPU time, with the
function's code folder and the layer on the path and bytecode already compiled (as the build ships
it). Two figures per function: importing the handler (``app``), as Lambda's init does; and that plus
building the function's services, which imports what its first request needs before any AWS call
(the API's account routes and a worker's provider modules load later, on first use). The design's
budget: each function's import at most 1.5 x a bare ``import boto3``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from herald_local.template import load_template

ROOT = Path(__file__).resolve().parents[1]
LAYER = ROOT / "layers" / "herald"
RUNS = 11
# CPU time, not wall time: the machine is shared. The number of modules loaded is printed too: it
# does not depend on the machine at all.
_TIMED = (
    "import sys, time; n = len(sys.modules); t = time.process_time(); {statement}; "
    "print(time.process_time() - t, len(sys.modules) - n)"
)
# What Lambda and the template set before any import (Powertools reads them at import time).
_ENVIRONMENT = {
    "POWERTOOLS_SERVICE_NAME": "herald",
    "POWERTOOLS_METRICS_NAMESPACE": "Herald",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_LOG_LEVEL": "INFO",
    "AWS_DEFAULT_REGION": "us-east-1",
}


# What builds each function's services (the composition roots build nothing at import time).
_SERVICES = {
    "ApiFunction": "from herald.composition.api import api_services as s; s()",
    "EmailWorkerFunction": "from herald.composition.workers import email_worker as s; s()",
    "WebhookWorkerFunction": "from herald.composition.workers import webhook_worker as s; s()",
    **{
        f"{name.title()}WebhookFunction": "from herald.composition.inbound import delivery_webhooks as s; "
        f"from herald.domain.providers import ProviderName as P; s(P.{name})"
        for name in ("SENDGRID", "RESEND", "POSTMARK")
    },
    **{
        f"{name.title()}WebhookFunction": "from herald.composition.inbound import payment_webhooks as s; "
        f"from herald.domain.inbound import Processor as P; s(P.{name})"
        for name in ("PAYSTACK", "POLAR")
    },
}


def _variables(template: dict[str, object], logical_id: str) -> dict[str, str]:
    """Every variable the template gives the function, with a stand-in value (nothing is called)."""
    resource = template["Resources"][logical_id]  # type: ignore[index]
    names = {
        *template["Globals"]["Function"]["Environment"]["Variables"],  # type: ignore[index]
        *resource["Properties"].get("Environment", {}).get("Variables", {}),
    }
    return dict.fromkeys(names, "1")


def import_cost(
    statement: str, path: list[Path], variables: dict[str, str] | None = None
) -> tuple[float, int]:
    """(CPU seconds, modules loaded) of running ``statement`` in a fresh interpreter."""
    environment = {
        **os.environ,
        **(variables or {}),
        **_ENVIRONMENT,
        "PYTHONPATH": os.pathsep.join(map(str, path)),
    }
    timings: list[tuple[float, int]] = []
    for _ in range(RUNS + 1):  # the first run compiles what is not compiled yet
        finished = subprocess.run(
            [sys.executable, "-c", _TIMED.format(statement=statement)],
            cwd=path[0],
            env=environment,
            capture_output=True,
            text=True,
            check=True,
        )
        seconds, modules = finished.stdout.split()
        timings.append((float(seconds), int(modules)))
    return min(timings[1:])


def main() -> None:
    template = load_template(ROOT / "template.yaml")
    boto3, boto3_modules = import_cost("import boto3", [LAYER])
    print(f"{'bare import boto3':<24} {boto3 * 1000:7.1f} ms {'':6} {boto3_modules:4d} modules")
    print(f"{'function':<24} {'import app':>27} {'+ services':>29}")
    for logical_id, statement in _SERVICES.items():
        code = ROOT / template["Resources"][logical_id]["Properties"]["CodeUri"]
        variables = _variables(template, logical_id)
        handler, handler_modules = import_cost("import app", [code, LAYER], variables)
        ready, ready_modules = import_cost(f"import app; {statement}", [code, LAYER], variables)
        print(
            f"{logical_id:<24} {handler * 1000:7.1f} ms {handler / boto3:4.2f} x {handler_modules:4d} modules"
            f" {ready * 1000:9.1f} ms {ready / boto3:4.2f} x {ready_modules:4d} modules"
        )


if __name__ == "__main__":
    main()
