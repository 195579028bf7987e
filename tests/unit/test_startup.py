"""Each function's handler module, imported as Lambda initialises it: the collector that ``herald``
pauses for the import runs again afterwards, with what the import made frozen out of its walks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from herald import INITIALIZATION_TYPE
from herald_local.cloudformation.template import load_template
from herald_local.config import project_root

ROOT = project_root()
TEMPLATE = load_template(ROOT / "template.yaml")
FUNCTIONS = {
    name: resource["Properties"]
    for name, resource in TEMPLATE["Resources"].items()
    if resource["Type"] == "AWS::Serverless::Function"
}
(LAYER,) = (
    resource["Properties"]["ContentUri"]
    for resource in TEMPLATE["Resources"].values()
    if resource["Type"] == "AWS::Serverless::LayerVersion"
)
# Imports the handler module the way the runtime does, then reports the collector's state and how
# many of the frozen objects a full collection would have found unreachable.
PROBE = """
import gc, importlib, json, sys
sys.path[:0] = json.loads(sys.argv[1])
importlib.import_module(sys.argv[2])
state = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
gc.unfreeze()
state["unreachable"] = gc.collect()
print(json.dumps(state))
"""


def imported(function: str, initialization: str | None) -> dict[str, Any]:
    properties = FUNCTIONS[function]
    module = properties["Handler"].rsplit(".", 1)[0]
    paths = [str(ROOT / properties["CodeUri"]), str(ROOT / LAYER)]
    environment = {
        **{name: value for name, value in os.environ.items() if name != INITIALIZATION_TYPE},
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_METRICS_NAMESPACE": "HeraldTest",
        **({INITIALIZATION_TYPE: initialization} if initialization else {}),
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(paths), module],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    state: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return state


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_after_lambda_imports_a_handler_the_collector_runs_with_the_import_frozen(function: str) -> None:
    state = imported(function, "on-demand")

    assert state["enabled"] is True
    assert state["frozen"] > 20_000  # the libraries' and Herald's modules, classes and functions
    # The price: cycles the import dropped stay allocated. A few hundred objects, not the import.
    assert state["unreachable"] < state["frozen"] / 100


def test_outside_lambda_importing_a_handler_leaves_the_collector_as_it_was() -> None:
    """Tests and local tools import handlers too: they keep the collector's usual behaviour."""
    state = imported("ApiFunction", None)

    assert (state["enabled"], state["frozen"]) == (True, 0)


def test_a_snapstart_initialisation_also_resumes_the_collector() -> None:
    state = imported("ApiFunction", "snap-start")

    assert (state["enabled"], state["frozen"] > 20_000) == (True, True)
