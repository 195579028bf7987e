"""Region facts from botocore's endpoint data: partition, DNS suffix and display name."""

from __future__ import annotations

from functools import cache
from typing import Any

from botocore.session import get_session


@cache
def _partition(region: str) -> dict[str, Any]:
    partitions: list[dict[str, Any]] = get_session().get_data("endpoints")["partitions"]
    for partition in partitions:
        if region in partition["regions"]:
            return partition
    return partitions[0]


def url_suffix(region: str) -> str:
    return str(_partition(region)["dnsSuffix"])


def partition_name(region: str) -> str:
    return str(_partition(region)["partition"])


def region_description(region: str) -> str:
    """The name AWS shows for a region ("US East (N. Virginia)"), as in alarm notifications."""
    return str(_partition(region)["regions"].get(region, {}).get("description", region))
