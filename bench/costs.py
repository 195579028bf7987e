"""Cost per million notifications: the measured steps (bench.scenarios) at the dated list prices of
bench/prices.yaml.

What is billed per notification, by service:
- API Gateway: one HTTP API request per invocation of a function behind the HTTP API;
- Lambda: every measured invocation, and its measured handler time at the template's memory size
  (workers get a full batch per invocation, so they count a fraction per message);
- SQS: the handlers' own requests (sends, dead-letter copies) plus, per worker invocation, the event
  source mapping's ReceiveMessage and DeleteMessageBatch (its empty long polls cost the same at any
  volume and are left out); the fair-queue surcharge when messages carry a MessageGroupId;
- DynamoDB: the measured write and read units (TallyFunction's stream reads are free: Lambda's
  GetRecords calls on a DynamoDB stream are not billed); KMS: the measured requests;
- S3: an attachment's PutObject at accept and GetObject per delivery pass, as measured; its deletion
  by the bucket's lifecycle rule is free. The KMS calls S3 makes itself for SSE-KMS (one per bucket
  key, not per object) are not seen by the bench.
Left out: CloudWatch Logs ingestion and metrics, data transfer, storage, free tiers, cold starts'
INIT time (billed since 2025-08-01, but how often a container is new depends on traffic).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from herald_local.cloudformation.topology import Topology

PRICES_FILE = Path(__file__).with_name("prices.yaml")
MILLION = 1_000_000
# Per worker invocation, what the event source mapping asks of SQS: one receive, one batch delete.
EVENT_SOURCE_REQUESTS_PER_INVOCATION = 2
# The S3 calls Herald makes, by the quantity each is billed as (attachments).
_S3_REQUESTS = {"s3:PutObject": "s3_put_requests", "s3:GetObject": "s3_get_requests"}


@dataclass(frozen=True)
class Price:
    key: str
    service: str
    dimension: str
    usd: float
    per: int
    as_of: str
    source_url: str
    confidence: str

    @property
    def each(self) -> float:
        return self.usd / self.per


@dataclass(frozen=True)
class PriceList:
    compiled: str
    prices: dict[str, Price]
    alternatives: dict[str, Price]

    @classmethod
    def load(cls, path: Path = PRICES_FILE) -> PriceList:
        document = yaml.safe_load(path.read_text())

        def entries(section: str) -> dict[str, Price]:
            return {key: Price(key=key, **entry) for key, entry in document[section].items()}

        return cls(str(document["compiled"]), entries("prices"), entries("alternatives"))

    def __getitem__(self, key: str) -> float:
        return self.prices[key].each


@dataclass(frozen=True)
class Platform:
    """How the template has the functions billed."""

    memory_mb: Mapping[str, int]
    behind_http_api: frozenset[str]
    fed_by_queues: frozenset[str]
    architectures: Mapping[str, str]

    @classmethod
    def of(cls, template: Mapping[str, Any], topology: Topology) -> Platform:
        default = ((template.get("Globals") or {}).get("Function") or {}).get("Architectures") or ["x86_64"]
        resources = template["Resources"]
        return cls(
            memory_mb={name: spec.memory_mb for name, spec in topology.functions.items()},
            behind_http_api=frozenset(route.function for route in topology.routes),
            fed_by_queues=frozenset(source.function for source in topology.queue_sources),
            architectures={
                name: str((resources[name]["Properties"].get("Architectures") or default)[0])
                for name in topology.functions
            },
        )


def billed_quantities(steps: list[Mapping[str, Any]], platform: Platform) -> dict[str, float]:
    """What AWS bills for one notification that takes these steps."""
    quantities = dict.fromkeys(
        (
            "api_requests",
            "lambda_invocations",
            "lambda_gb_seconds",
            "sqs_requests",
            "write_units",
            "read_units",
            "kms_requests",
            "s3_put_requests",
            "s3_get_requests",
        ),
        0.0,
    )
    for step in steps:
        for function, use in step["lambda"].items():
            quantities["lambda_invocations"] += use["invocations"]
            quantities["lambda_gb_seconds"] += use["ms"] / 1000 * platform.memory_mb[function] / 1024
            if function in platform.behind_http_api:
                quantities["api_requests"] += use["invocations"]
            if function in platform.fed_by_queues:
                quantities["sqs_requests"] += use["invocations"] * EVENT_SOURCE_REQUESTS_PER_INVOCATION
        for call, count in step["calls"].items():
            service = call.split(":", 1)[0]
            if service in ("sqs", "kms"):
                quantities[f"{service}_requests"] += count
            if call in _S3_REQUESTS:
                quantities[_S3_REQUESTS[call]] += count
        quantities["write_units"] += step["write_units"]["total"]
        quantities["read_units"] += step["read_units"]["total"]
    return quantities


def usd_per_million(steps: list[Mapping[str, Any]], platform: Platform, prices: PriceList) -> dict[str, Any]:
    architectures = {platform.architectures[function] for step in steps for function in step["lambda"]}
    if architectures != {"arm64"}:
        raise ValueError(f"only arm64 Lambda prices are on file, the template uses {sorted(architectures)}")
    quantities = billed_quantities(steps, platform)
    sqs_price = prices["sqs_standard_request"]
    if any(step["fair_queues"] for step in steps):
        sqs_price += prices["sqs_fair_queue_surcharge"]
    by_service = {
        "API Gateway": quantities["api_requests"] * prices["api_gateway_http_request"],
        "Lambda requests": quantities["lambda_invocations"] * prices["lambda_request"],
        "Lambda duration": quantities["lambda_gb_seconds"] * prices["lambda_gb_second_arm64"],
        "SQS": quantities["sqs_requests"] * sqs_price,
        "DynamoDB": quantities["write_units"] * prices["dynamodb_write_unit"]
        + quantities["read_units"] * prices["dynamodb_read_unit"],
        "KMS": quantities["kms_requests"] * prices["kms_request"],
        "S3": quantities["s3_put_requests"] * prices["s3_put_request"]
        + quantities["s3_get_requests"] * prices["s3_get_request"],
    }
    return {
        "per_notification": quantities,
        "usd_by_service": {service: usd * MILLION for service, usd in by_service.items()},
        "usd_total": sum(by_service.values()) * MILLION,
    }


def cost_per_million(
    scenarios: Mapping[str, Mapping[str, Any]],
    notifications: Mapping[str, tuple[str, ...]],
    platform: Platform,
    prices: PriceList,
) -> dict[str, Any]:
    return {
        "notifications": {
            name: {
                "steps": list(steps),
                **usd_per_million([scenarios[key] for key in steps], platform, prices),
            }
            for name, steps in notifications.items()
        },
        "alternatives": {
            key: {
                "service": price.service,
                "dimension": price.dimension,
                "usd_per_million": price.each * MILLION,
            }
            for key, price in prices.alternatives.items()
        },
    }
