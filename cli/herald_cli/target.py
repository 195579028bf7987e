"""Which Herald the CLI talks to: the running local stack (default) or a deployed CloudFormation stack."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import boto3
from botocore.config import Config

from herald_local.state import StackNotRunning, find_running_stack


class TargetError(RuntimeError):
    pass


@dataclass(frozen=True)
class Target:
    # The stack's outputs: the table, the queues and the settings the CLI needs are named there.
    outputs: dict[str, str]
    region: str
    endpoint: str | None


def local_target(local_dir: Path | None = None) -> Target:
    """The running local stack, found through its state file (the same one ``make run`` writes)."""
    try:
        state = find_running_stack(local_dir)
    except StackNotRunning as exc:
        raise TargetError(f"{exc}; or pass --stack NAME.") from exc
    endpoint = state["awsEndpoint"]
    # moto accepts any credentials; set them only if the operator has none configured.
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    # SES v2 is the sandbox's imitation there (moto has no SES tenants), as for the stack's functions.
    os.environ["AWS_ENDPOINT_URL_SESV2"] = f"{state['sandboxUrl']}/ses"
    return Target(dict(state["outputs"]), state["region"], endpoint)


def deployed_target(stack_name: str, region: str | None) -> Target:
    session = boto3.session.Session(region_name=region)
    client = session.client("cloudformation", config=Config(connect_timeout=5, read_timeout=15))
    try:
        stack = client.describe_stacks(StackName=stack_name)["Stacks"][0]
    except client.exceptions.ClientError as exc:
        raise TargetError(f"Cannot read stack {stack_name}: {exc}") from exc
    outputs = {output["OutputKey"]: output["OutputValue"] for output in stack.get("Outputs", [])}
    if "TableName" not in outputs:
        raise TargetError(f"Stack {stack_name} has no TableName output; is it a Herald stack?")
    return Target(outputs, session.region_name or "us-east-1", None)
