"""What docs/api.md states, read for the tests that hold it to the code: its routes and its table
of error codes."""

from __future__ import annotations

import re

from herald_local.config import project_root

API_DOCS = project_root() / "docs" / "api.md"


def _text() -> str:
    return API_DOCS.read_text(encoding="utf-8")


def documented_routes() -> set[tuple[str, str]]:
    """(method, path) of every row of the page's route tables."""
    rows = re.findall(r"^\| `(GET|POST|PUT|PATCH|DELETE) (/api/v1/[^`]*)` \|", _text(), re.MULTILINE)
    return {(method, path) for method, path in rows}


def documented_statuses() -> dict[str, int]:
    """Each row of the error code table: code -> status."""
    table = _text().split("## Error codes", 1)[1]
    return {
        code: int(status)
        for code, status in re.findall(r"^\| `([a-z_]+)` \| (\d{3}) \|", table, re.MULTILINE)
    }
