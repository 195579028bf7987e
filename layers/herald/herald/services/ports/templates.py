"""Ports of email templates: their storage (every change with its audit entry) and the engine that
checks and renders them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from herald.domain.audit import AuditEntry
    from herald.domain.templates import Template, TemplateContent, TemplateDetail, TemplateVersion


class TemplateStore(Protocol):
    def list(self, tenant_id: str) -> tuple[Template, ...]:
        """The tenant's templates, by name."""

    def detail(self, tenant_id: str, template_id: str) -> TemplateDetail | None: ...

    def version(self, tenant_id: str, template_id: str, version: int | None) -> TemplateVersion | None:
        """One version in one read; ``None`` asks for the published one."""

    def create(
        self, tenant_id: str, template: Template, first: TemplateVersion, audit: AuditEntry
    ) -> None: ...

    def add_version(
        self,
        tenant_id: str,
        template: Template,
        version: TemplateVersion,
        dropped: int | None,
        audit: AuditEntry,
    ) -> None:
        """``template`` with ``version`` as its latest, ``dropped`` (a version no longer kept) gone;
        ``TemplateChanged`` when another change came first."""

    def publish(
        self, tenant_id: str, template: Template, version: TemplateVersion, audit: AuditEntry
    ) -> None:
        """``TemplateChanged`` when the template is gone."""

    def delete(self, tenant_id: str, detail: TemplateDetail, audit: AuditEntry) -> None:
        """``TemplateChanged`` when another change came first."""


class TemplateEngine(Protocol):
    def check(self, content: TemplateContent) -> None:
        """``TemplateFault`` when a part is not a valid template."""

    def render(self, content: TemplateContent, data: Mapping[str, Any]) -> TemplateContent:
        """``TemplateFault`` naming a missing variable or a limit reached."""
