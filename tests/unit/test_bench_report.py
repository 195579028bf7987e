"""The bench's page generator and cold-start probes: figures come from the results, calls from the code."""

from __future__ import annotations

from typing import Any

import pytest

from bench.cold_start import composition_calls
from bench.report import _api_floor
from herald_local.config import project_root


def cold_start(boto3_ms: float, api_ratio: float, packages: dict[str, float]) -> dict[str, Any]:
    return {
        "cold_start": {
            "baseline": "import boto3",
            "layouts": {
                "bytecode": {
                    "import boto3": {"cpu_ms": boto3_ms},
                    "ApiFunction": {"ratio_to_boto3": api_ratio},
                }
            },
            "api_import_profile": {"by_package": [{"name": n, "ms": ms} for n, ms in packages.items()]},
        }
    }


def test_the_api_floor_is_boto3_plus_powertools_validation_from_the_results() -> None:
    packages = {"aws_lambda_powertools": 140.0, "pydantic": 35.0, "pydantic_core": 12.0, "herald": 58.0}

    text = _api_floor(cold_start(180.0, 3.1, packages))

    assert "3.10× a bare `import boto3` (180 ms" in text
    assert "(180 + 187) / 180 ≈ 2.0×" in text  # annotated_types, not in the profile, counts as 0
    assert "herald 58 ms" in text
    assert "PynamoDB – ms" in text
    assert "python3.12" in text


@pytest.mark.parametrize(
    ("function", "calls"),
    [
        ("api", ("api_services()",)),
        ("email_worker", ("email_worker()",)),
        ("sendgrid_webhook", ("delivery_webhooks(ProviderName.SENDGRID)",)),
        ("polar_webhook", ("payment_webhooks(Processor.POLAR)",)),
    ],
)
def test_a_functions_services_are_built_by_its_handlers_calls_to_the_composition_package(
    function: str, calls: tuple[str, ...]
) -> None:
    source = (project_root() / "functions" / function / "app.py").read_text()

    assert composition_calls(source) == calls
