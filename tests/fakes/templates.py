"""An in-memory template store: heads, kept versions and the published copy, each change with its
audit entry, refused like the DynamoDB store when the head it was decided from changed."""

from __future__ import annotations

from herald.domain.audit import AuditEntry
from herald.domain.templates import Template, TemplateDetail, TemplateVersion
from herald.services.outcomes import TemplateChanged


class FakeTemplateStore:
    def __init__(self) -> None:
        self.heads: dict[tuple[str, str], Template] = {}
        self.versions: dict[tuple[str, str], dict[int, TemplateVersion]] = {}
        self.published: dict[tuple[str, str], TemplateVersion] = {}
        self.audit: list[AuditEntry] = []
        self.reads = 0

    def list(self, tenant_id: str) -> tuple[Template, ...]:
        found = [head for (tenant, _), head in self.heads.items() if tenant == tenant_id]
        return tuple(sorted(found, key=lambda head: (head.name.lower(), head.template_id)))

    def detail(self, tenant_id: str, template_id: str) -> TemplateDetail | None:
        head = self.heads.get((tenant_id, template_id))
        if head is None:
            return None
        kept = self.versions[(tenant_id, template_id)]
        return TemplateDetail(head, tuple(kept[number] for number in sorted(kept)))

    def version(self, tenant_id: str, template_id: str, version: int | None) -> TemplateVersion | None:
        self.reads += 1
        if version is None:
            return self.published.get((tenant_id, template_id))
        return self.versions.get((tenant_id, template_id), {}).get(version)

    def create(self, tenant_id: str, template: Template, first: TemplateVersion, audit: AuditEntry) -> None:
        self.heads[(tenant_id, template.template_id)] = template
        self.versions[(tenant_id, template.template_id)] = {first.version: first}
        self.audit.append(audit)

    def add_version(
        self,
        tenant_id: str,
        template: Template,
        version: TemplateVersion,
        dropped: int | None,
        audit: AuditEntry,
    ) -> None:
        key = (tenant_id, template.template_id)
        head = self.heads.get(key)
        if head is None or head.latest_version != version.version - 1:
            raise TemplateChanged()
        self.heads[key] = template
        self.versions[key][version.version] = version
        if dropped is not None:
            del self.versions[key][dropped]
        self.audit.append(audit)

    def publish(
        self, tenant_id: str, template: Template, version: TemplateVersion, audit: AuditEntry
    ) -> None:
        key = (tenant_id, template.template_id)
        if key not in self.heads:
            raise TemplateChanged()
        self.heads[key] = template
        self.published[key] = version
        self.audit.append(audit)

    def delete(self, tenant_id: str, detail: TemplateDetail, audit: AuditEntry) -> None:
        key = (tenant_id, detail.template.template_id)
        if self.heads.get(key) != detail.template:
            raise TemplateChanged()
        del self.heads[key], self.versions[key]
        self.published.pop(key, None)
        self.audit.append(audit)
