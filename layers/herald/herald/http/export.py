"""The job list as a file to save (GET /notifications/jobs/export): CSV or JSON lines, one row per
job, with the fields of ``ListedJob`` (the list's own answer model, so both stay one shape)."""

from __future__ import annotations

import csv
import io
from typing import Any, Literal

import msgspec

from herald.http.answers import ListedJob

# Rows per export call: 1 000 rows of a few hundred bytes stay far below API Gateway's 10 MB and
# Lambda's 6 MB response limits, and their reads (at most 11 index pages and 10 BatchGetItems, plus
# a filter's bound) well inside the API's 29 seconds. X-Next-Cursor continues.
EXPORT_LIMIT = 1000

ExportFormat = Literal["csv", "jsonl"]
MEDIA_TYPES: dict[ExportFormat, str] = {"csv": "text/csv", "jsonl": "application/x-ndjson"}
COLUMNS = [field.encode_name for field in msgspec.structs.fields(ListedJob)]
# A spreadsheet takes a cell starting with one of these for a formula (CSV injection): such a
# cell gets a leading apostrophe, which spreadsheets show as text.
_FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")


def exported(jobs: list[ListedJob], file_format: ExportFormat) -> str:
    return _csv(jobs) if file_format == "csv" else _json_lines(jobs)


def _csv(jobs: list[ListedJob]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for job in jobs:
        row = msgspec.to_builtins(job)
        writer.writerow([_cell(row.get(column)) for column in COLUMNS])
    return out.getvalue()


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return f"'{text}" if text.startswith(_FORMULA_LEADS) else text


def _json_lines(jobs: list[ListedJob]) -> str:
    return "".join(msgspec.json.encode(job).decode() + "\n" for job in jobs)
