"""From the translated template to resources in moto and the resolved topology the runtime plays."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from herald_local.cloudformation.moto_stack import apply_fixes, create_stack, local_origins, resolve
from herald_local.cloudformation.stack_plan import plan_stack
from herald_local.cloudformation.topology import Topology, build_topology
from herald_local.config import STACK_NAME

log = logging.getLogger(__name__)

# Makes a boto3 client for a service name, pointed at moto.
ClientFactory = Callable[[str], Any]


def create_resources(
    translated: dict[str, Any],
    parameters: Mapping[str, str],
    client: ClientFactory,
    *,
    root: Path,
    gateway_url: str,
    sns_bridge_url: str | None = None,
    secrets: Mapping[str, str] | None = None,
) -> Topology:
    """``secrets``: SSM SecureStrings (name -> value) the template's functions expect to exist, as an
    operator creates them before deploying."""
    region = str(client("cloudformation").meta.region_name)
    plan = plan_stack(translated, region, sns_bridge_url)
    values = create_stack(client("cloudformation"), STACK_NAME, plan, parameters)
    apply_fixes(client, plan, values)
    for name, value in (secrets or {}).items():
        client("ssm").put_parameter(Name=name, Value=value, Type="SecureString", Overwrite=True)
    resolved = resolve(plan, values, local_origins(plan, region, gateway_url))
    for name, reason in resolved.skipped_outputs.items():
        log.info("output %s is not resolved locally: %s", name, reason)
    return build_topology(resolved, translated, root, region)
