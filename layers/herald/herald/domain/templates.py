"""A tenant's email templates: a subject, an HTML body and an optional text part written in Liquid,
kept in numbered versions, one of which may be published.

Herald renders templates itself, at accept: a provider's own template id means nothing to the next
provider in a fallback, and the stored job then carries what the recipient gets, so a retry or a
fallback sends the same mail. A send names a template and its data (``TemplateUse``); the job keeps
the template's id and the version it rendered, never the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

# A tenant's templates and the versions each keeps: the listing reads every template's head item,
# and deleting a template removes its versions in one transaction (at most 100 items).
MAX_TEMPLATES = 100
MAX_VERSIONS_KEPT = 20
MAX_NAME_LENGTH = 100
# A template's own text, per part (a version is one item: DynamoDB's item limit is 400 KB).
MAX_SOURCE_BYTES = 64 * 1024
# What one rendered part may grow to: the limit of a body sent without a template.
MAX_RENDERED_BYTES = 256 * 1024
# Loop iterations across one rendering (a loop inside a loop counts every inner pass).
MAX_LOOP_ITERATIONS = 10_000
# What rendering one part may take: well inside the API's own timeout.
MAX_RENDER_SECONDS = 1.0
MAX_SUBJECT_LENGTH = 998


class TemplateContent(msgspec.Struct, frozen=True):
    """A version's three parts as written (Liquid), or as rendered for one send."""

    subject: str
    html: str
    text: str | None = None


class TemplateVersion(msgspec.Struct, frozen=True):
    version: int
    content: TemplateContent
    created_at: str
    created_by: str


class Template(msgspec.Struct, frozen=True):
    """A template's head: its name, its latest version (the draft) and the published one."""

    template_id: str
    name: str
    latest_version: int
    created_at: str
    updated_at: str
    published_version: int | None = None
    published_at: str | None = None


class TemplateDetail(msgspec.Struct, frozen=True):
    """A template with the versions it keeps, oldest first."""

    template: Template
    versions: tuple[TemplateVersion, ...]

    def version(self, number: int) -> TemplateVersion | None:
        return next((kept for kept in self.versions if kept.version == number), None)


class TemplateUse(msgspec.Struct, frozen=True):
    """The template a send names. Until rendered, ``data`` holds its variables and ``version`` is the
    one asked for (None: the published one); once rendered, ``version`` is the one used and ``data``
    is dropped (the job keeps the mail it rendered into)."""

    template_id: str
    version: int | None = None
    data: Mapping[str, Any] | None = None

    @property
    def rendered(self) -> bool:
        return self.data is None


class TemplateFault(Exception):
    """A template that cannot be parsed or rendered: ``message`` says where and why, in one sentence
    a tenant can act on (a missing variable is named)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
