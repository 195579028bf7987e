"""``herald schedules run FUNCTION``: run a scheduled function now, as its schedule would.

On the local stack the function runs once in a fresh runner (as ``make invoke`` does); with
``--stack`` the deployed Lambda is invoked. Either way it gets an EventBridge scheduled event.
"""

from __future__ import annotations

import json
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from herald_cli.target import TargetError
from herald_local.awslambda.functions import FunctionUnavailable
from herald_local.host.console import configure
from herald_local.invoke import function_spec, invoke_once
from herald_local.state import StackNotRunning, find_running_stack


def scheduled_event(region: str, function: str) -> dict[str, Any]:
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.scheduler",
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [f"herald-cli:{function}"],
        "detail": {},
    }


def run_local(function: str, local_dir: Path | None) -> Any:
    try:
        state = find_running_stack(local_dir)
        # The function's own log lines go to the stack's log file; stdout carries only the result.
        configure(verbose=False, log_path=Path(state["logFile"]), console=sys.stderr)
        spec = function_spec(state, function)
        invocation = invoke_once(spec, scheduled_event(state["region"], function), state)
    except (StackNotRunning, KeyError, FunctionUnavailable) as exc:
        raise TargetError(str(exc.args[0] if isinstance(exc, KeyError) else exc)) from exc
    if invocation.failed:
        raise TargetError(
            f"{function} failed ({invocation.function_error}): {json.dumps(invocation.document())}"
        )
    return invocation.document()


def run_deployed(function: str, stack_name: str, region: str | None) -> Any:
    session = boto3.session.Session(region_name=region)
    config = Config(connect_timeout=5, read_timeout=310, retries={"max_attempts": 1})
    try:
        resource = session.client("cloudformation", config=config).describe_stack_resource(
            StackName=stack_name, LogicalResourceId=function
        )["StackResourceDetail"]
        answer = session.client("lambda", config=config).invoke(
            FunctionName=resource["PhysicalResourceId"],
            Payload=json.dumps(scheduled_event(session.region_name or "us-east-1", function)).encode(),
        )
    except Exception as exc:  # noqa: BLE001 - any AWS failure is reported to the operator as is
        raise TargetError(f"cannot run {function} in {stack_name}: {exc}") from exc
    document = json.loads(answer["Payload"].read() or b"null")
    if answer.get("FunctionError"):
        raise TargetError(f"{function} failed ({answer['FunctionError']}): {json.dumps(document)}")
    return document
