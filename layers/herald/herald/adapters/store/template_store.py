"""Data access for a tenant's email templates.

A template is a head item in the tenant's template list (``TEMPLATES#<tenantId>``) and, in a
partition of its own, its kept versions and a copy of the published one, so a send reads the
published version in one GetItem without knowing its number. Every change is one transaction with
its audit entry, conditioned on the head it was decided from. DynamoDB calls: list = 1 Query (at most
``MAX_TEMPLATES`` small items); detail = 1 GetItem + 1 Query; version (the send path) = 1 GetItem;
create, new version, publish, delete = 1 transaction each.
"""

from __future__ import annotations

from pynamodb.exceptions import DoesNotExist

from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.models import (
    TEMPLATE_PUBLISHED_SK,
    TEMPLATE_VERSION_PREFIX,
    TemplateItem,
    TemplateVersionItem,
    template_pk,
    template_version_sk,
    templates_pk,
)
from herald.adapters.store.table import Table, transaction, translated
from herald.domain.audit import AuditEntry
from herald.domain.templates import Template, TemplateContent, TemplateDetail, TemplateVersion
from herald.services.outcomes import TemplateChanged

WHAT = "template write"


def _changed(codes: list[str | None]) -> Exception | None:
    return TemplateChanged() if "ConditionalCheckFailed" in codes else None


class DynamoTemplateStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def list(self, tenant_id: str) -> tuple[Template, ...]:
        with translated("template read"):
            items = list(self._table[TemplateItem].query(templates_pk(tenant_id)))
        return tuple(
            sorted((_template(item) for item in items), key=lambda t: (t.name.lower(), t.template_id))
        )

    def detail(self, tenant_id: str, template_id: str) -> TemplateDetail | None:
        with translated("template read"):
            try:
                head = self._table[TemplateItem].get(
                    templates_pk(tenant_id), template_id, consistent_read=True
                )
            except DoesNotExist:
                return None
            items = self._table[TemplateVersionItem].query(
                template_pk(tenant_id, template_id),
                TemplateVersionItem.sk.startswith(TEMPLATE_VERSION_PREFIX),
                consistent_read=True,
            )
            versions = tuple(_version(item) for item in items)
        return TemplateDetail(_template(head), versions)

    def version(self, tenant_id: str, template_id: str, version: int | None) -> TemplateVersion | None:
        sk = TEMPLATE_PUBLISHED_SK if version is None else template_version_sk(version)
        with translated("template read"):
            try:
                item = self._table[TemplateVersionItem].get(template_pk(tenant_id, template_id), sk)
            except DoesNotExist:
                return None
        return _version(item)

    def create(self, tenant_id: str, template: Template, first: TemplateVersion, audit: AuditEntry) -> None:
        with transaction(self._table.connection, WHAT, _changed) as tx:
            tx.save(self._head(tenant_id, template), condition=TemplateItem.pk.does_not_exist())
            tx.save(self._version(tenant_id, template.template_id, first, template_version_sk(first.version)))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def add_version(
        self,
        tenant_id: str,
        template: Template,
        version: TemplateVersion,
        dropped: int | None,
        audit: AuditEntry,
    ) -> None:
        pk = template_pk(tenant_id, template.template_id)
        with transaction(self._table.connection, WHAT, _changed) as tx:
            tx.save(
                self._head(tenant_id, template),
                condition=TemplateItem.latest_version == version.version - 1,
            )
            tx.save(
                self._version(tenant_id, template.template_id, version, template_version_sk(version.version)),
                condition=TemplateVersionItem.pk.does_not_exist(),
            )
            if dropped is not None:
                tx.delete(self._table[TemplateVersionItem](pk, template_version_sk(dropped)))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def publish(
        self, tenant_id: str, template: Template, version: TemplateVersion, audit: AuditEntry
    ) -> None:
        with transaction(self._table.connection, WHAT, _changed) as tx:
            tx.save(self._head(tenant_id, template), condition=TemplateItem.pk.exists())
            tx.save(self._version(tenant_id, template.template_id, version, TEMPLATE_PUBLISHED_SK))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def delete(self, tenant_id: str, detail: TemplateDetail, audit: AuditEntry) -> None:
        template = detail.template
        pk = template_pk(tenant_id, template.template_id)
        with transaction(self._table.connection, WHAT, _changed) as tx:
            tx.delete(
                self._table[TemplateItem](templates_pk(tenant_id), template.template_id),
                condition=TemplateItem.latest_version == template.latest_version,
            )
            for kept in detail.versions:
                tx.delete(self._table[TemplateVersionItem](pk, template_version_sk(kept.version)))
            if template.published_version is not None:
                tx.delete(self._table[TemplateVersionItem](pk, TEMPLATE_PUBLISHED_SK))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def _head(self, tenant_id: str, template: Template) -> TemplateItem:
        return self._table[TemplateItem](
            templates_pk(tenant_id),
            template.template_id,
            template_id=template.template_id,
            name=template.name,
            latest_version=template.latest_version,
            published_version=template.published_version,
            published_at=template.published_at,
            created_at=template.created_at,
            updated_at=template.updated_at,
        )

    def _version(
        self, tenant_id: str, template_id: str, version: TemplateVersion, sk: str
    ) -> TemplateVersionItem:
        content = version.content
        document = {"subject": content.subject, "html": content.html, "text": content.text}
        return self._table[TemplateVersionItem](
            template_pk(tenant_id, template_id),
            sk,
            version=version.version,
            content={name: value for name, value in document.items() if value is not None},
            created_at=version.created_at,
            created_by=version.created_by,
        )


def _template(item: TemplateItem) -> Template:
    published = item.published_version
    return Template(
        template_id=item.template_id,
        name=item.name,
        latest_version=int(item.latest_version),
        created_at=item.created_at,
        updated_at=item.updated_at,
        published_version=int(published) if published is not None else None,
        published_at=item.published_at,
    )


def _version(item: TemplateVersionItem) -> TemplateVersion:
    document = item.content
    content = TemplateContent(str(document["subject"]), str(document["html"]), document.get("text"))
    return TemplateVersion(int(item.version), content, item.created_at, item.created_by)
