"""The request bodies of the template routes (imported with those routes only)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from herald.domain.templates import MAX_NAME_LENGTH, MAX_SOURCE_BYTES, MAX_SUBJECT_LENGTH, TemplateContent
from herald.http.requests import StrictBody, TemplateVersionNumber, bounded_utf8

# The parts' sources; what they render to is checked at rendering (herald.services.templates).
Source = Annotated[str, Field(min_length=1), bounded_utf8(MAX_SOURCE_BYTES, "a template part")]


class _Parts(StrictBody):
    subject: str = Field(
        min_length=1,
        max_length=MAX_SUBJECT_LENGTH,
        description="Liquid; rendered without HTML escaping, then made one line",
    )
    html: Source = Field(description="Liquid; variables are HTML-escaped (64 KiB at most)")
    text: Annotated[str, bounded_utf8(MAX_SOURCE_BYTES, "a template part")] | None = Field(
        default=None, description="Liquid, the plain-text part; not escaped (64 KiB at most)"
    )

    def content(self) -> TemplateContent:
        return TemplateContent(self.subject, self.html, self.text)


class TemplateBody(_Parts):
    name: str = Field(min_length=1, max_length=MAX_NAME_LENGTH, description="How the account calls it")


class TemplateUpdate(_Parts):
    """A new draft version."""

    name: str | None = Field(
        default=None, min_length=1, max_length=MAX_NAME_LENGTH, description="Default: the name it has"
    )


class PublishRequest(StrictBody):
    version: TemplateVersionNumber | None = Field(default=None, description="Default: the latest version")


class PreviewRequest(StrictBody):
    data: dict[str, Any] = Field(default_factory=dict, description="The variables, as a send's template.data")
    version: TemplateVersionNumber | None = Field(
        default=None, description="Default: the latest version (the draft)"
    )
