"""The answers of the template routes (imported with those routes only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import msgspec
from msgspec import Meta

from herald.http.envelope import Answer, Timestamp

if TYPE_CHECKING:
    from herald.domain.templates import Template as TemplateRecord
    from herald.domain.templates import TemplateContent, TemplateDetail
    from herald.domain.templates import TemplateVersion as VersionRecord


class TemplateSummary(Answer):
    id: str
    name: str
    version: Annotated[int, Meta(description="The latest version: the draft that PUT made last")]
    published_version: Annotated[
        int | None, Meta(description="What a send without a version uses; null: none")
    ]
    created_at: Timestamp
    updated_at: Timestamp
    published_at: Timestamp | None

    @classmethod
    def of(cls, template: TemplateRecord) -> TemplateSummary:
        return cls(
            id=template.template_id,
            name=template.name,
            version=template.latest_version,
            published_version=template.published_version,
            created_at=template.created_at,
            updated_at=template.updated_at,
            published_at=template.published_at,
        )


class TemplateVersion(Answer):
    version: int
    subject: str
    html: str
    text: str | None
    created_at: Timestamp
    created_by: Annotated[str, Meta(description="Who wrote it: a member's address, a key's name")]
    published: Annotated[bool, Meta(description="Whether sends without a version use it")]

    @classmethod
    def of(cls, kept: VersionRecord, published: int | None) -> TemplateVersion:
        content = kept.content
        return cls(
            version=kept.version,
            subject=content.subject,
            html=content.html,
            text=content.text,
            created_at=kept.created_at,
            created_by=kept.created_by,
            published=kept.version == published,
        )


class Template(TemplateSummary):
    draft: Annotated[TemplateVersion, Meta(description="The latest version")]
    published: Annotated[TemplateVersion | None, Meta(description="The published version; null: none")]
    versions: Annotated[list[TemplateVersion], Meta(description="Every kept version, oldest first")]

    @classmethod
    def of_detail(cls, detail: TemplateDetail) -> Template:
        head = detail.template
        versions = [TemplateVersion.of(kept, head.published_version) for kept in detail.versions]
        by_number = {shown.version: shown for shown in versions}
        return cls(
            **msgspec.structs.asdict(TemplateSummary.of(head)),
            draft=by_number[head.latest_version],
            published=by_number.get(head.published_version) if head.published_version else None,
            versions=versions,
        )


class Preview(Answer):
    version: Annotated[int, Meta(description="The version rendered")]
    subject: str
    html: str
    text: str | None

    @classmethod
    def of(cls, version: int, rendered: TemplateContent) -> Preview:
        return cls(version=version, subject=rendered.subject, html=rendered.html, text=rendered.text)
