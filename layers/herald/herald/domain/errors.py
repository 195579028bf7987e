"""Domain errors. Each carries the HTTP status and machine code of the API contract; the API maps
them to the error envelope in one place (``herald.http.envelope``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class FieldProblem:
    field: str
    message: str


@dataclass
class HeraldError(Exception):
    """An error the client should see: one human sentence plus a machine code."""

    message: str
    code: str = "internal_error"
    status: int = 500
    details: list[FieldProblem] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message


def bad_request(message: str, code: str = "validation_error", **extra: Any) -> HeraldError:
    return HeraldError(message, code, 400, extra=extra)


def validation_failed(problems: list[FieldProblem]) -> HeraldError:
    first = problems[0]
    summary = f"{first.field}: {first.message}" if first.field else first.message
    more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
    return HeraldError(f"Invalid request: {summary}{more}", "validation_error", 400, details=problems)


def unauthorized(message: str, code: str) -> HeraldError:
    return HeraldError(message, code, 401)


def forbidden(message: str, code: str) -> HeraldError:
    return HeraldError(message, code, 403)


def not_found(message: str, code: str = "not_found") -> HeraldError:
    return HeraldError(message, code, 404)


def conflict(message: str, code: str, **extra: Any) -> HeraldError:
    return HeraldError(message, code, 409, extra=extra)


def too_many_requests(message: str, code: str, retry_after: int) -> HeraldError:
    return HeraldError(
        message, code, 429, extra={"retryAfter": retry_after}, headers={"Retry-After": str(retry_after)}
    )


def unavailable(message: str, code: str, **extra: Any) -> HeraldError:
    return HeraldError(message, code, 503, extra=extra)


class DependencyError(Exception):
    """A dependency (table, queue, KMS, provider) failed; the message names it but holds no secret."""
