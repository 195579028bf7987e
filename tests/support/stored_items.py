"""Table items as a reader of the raw table sees them, with deflated requests inflated.

A secret search over raw items would pass trivially on compressed bytes (and ``json.dumps`` cannot
encode them at all), so every such search reads the text a binary attribute holds."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from typing import Any

# The one binary attribute that holds deflated text (a job's request); others are digests.
DEFLATED = "request"


def readable(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{name: _readable(name, value) for name, value in item.items()} for item in items]


def _readable(name: str, value: dict[str, Any]) -> dict[str, Any]:
    if "B" in value:
        if name == DEFLATED:
            return {"S": zlib.decompress(value["B"], wbits=-zlib.MAX_WBITS).decode()}
        return {"S": value["B"].hex()}
    if "M" in value:
        return {"M": {inner_name: _readable(inner_name, inner) for inner_name, inner in value["M"].items()}}
    if "L" in value:
        return {"L": [_readable(name, inner) for inner in value["L"]]}
    return value


def table_text(items: Iterable[dict[str, Any]]) -> str:
    """Every item's text, for a search."""
    return json.dumps(readable(items))
