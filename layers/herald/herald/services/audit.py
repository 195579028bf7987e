"""The account's audit log as the tenant reads it: newest first, by page, filtered by action or by
who acted. Nothing here writes: entries are written with the changes they record, and no route
changes or deletes one."""

from __future__ import annotations

from herald.domain.account import TenantContext
from herald.domain.audit import MAX_AUDIT_PAGE, AuditAction, AuditPage
from herald.domain.errors import ErrorCode, HeraldError
from herald.services.ports.audit import AuditLog

DEFAULT_AUDIT_PAGE = 50


def audit_action(value: str) -> AuditAction:
    """The action a filter names; a refusal lists every action there is."""
    try:
        return AuditAction(value)
    except ValueError:
        allowed = ", ".join(action.value for action in AuditAction)
        raise HeraldError(
            f"Invalid request: action: {value} is not an audit action; use one of {allowed}.",
            ErrorCode.VALIDATION_ERROR,
        ) from None


class AuditService:
    def __init__(self, log: AuditLog) -> None:
        self._log = log

    def page(
        self,
        tenant: TenantContext,
        *,
        action: str | None = None,
        actor: str | None = None,
        limit: int = DEFAULT_AUDIT_PAGE,
        cursor: str | None = None,
    ) -> AuditPage:
        """Only the caller's own tenant's entries: the tenant comes from the credential, never from
        the request."""
        chosen = audit_action(action) if action else None
        try:
            return self._log.page(
                tenant.tenant_id,
                action=chosen,
                actor=actor or None,
                limit=max(1, min(limit, MAX_AUDIT_PAGE)),
                cursor=cursor or None,
            )
        except ValueError as exc:
            raise HeraldError("The cursor is not valid.", ErrorCode.INVALID_CURSOR) from exc
