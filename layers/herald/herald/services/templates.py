"""A tenant's email templates: create, list and read, new draft versions, publish, preview, delete;
and rendering the template a send names (the accept path's one GetItem and one rendering).

A template's latest version is its draft; a send without a version uses the published one. Every
change is written with its audit entry, and is checked by the engine first: a template that is
not valid Liquid is refused when it is saved, not when it is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from msgspec.structs import replace

from herald.domain.access import Grant, generate_id
from herald.domain.audit import AuditAction, AuditEntry, entry
from herald.domain.clock import iso, utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.notifications import EmailNotification, format_character, line_breaking_character
from herald.domain.templates import (
    MAX_NAME_LENGTH,
    MAX_SOURCE_BYTES,
    MAX_SUBJECT_LENGTH,
    MAX_TEMPLATES,
    MAX_VERSIONS_KEPT,
    Template,
    TemplateContent,
    TemplateDetail,
    TemplateFault,
    TemplateUse,
    TemplateVersion,
)
from herald.services.outcomes import TemplateChanged
from herald.services.ports.templates import TemplateEngine, TemplateStore


class TemplateService:
    def __init__(
        self, store: TemplateStore, engine: TemplateEngine, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self._store = store
        self._engine = engine
        self._clock = clock

    def list(self, tenant_id: str) -> tuple[Template, ...]:
        return self._store.list(tenant_id)

    def get(self, tenant_id: str, template_id: str) -> TemplateDetail:
        detail = self._store.detail(tenant_id, template_id)
        if detail is None:
            raise not_found(template_id)
        return detail

    def create(self, tenant_id: str, grant: Grant, name: str, content: TemplateContent) -> TemplateDetail:
        self._check(content)
        if len(self._store.list(tenant_id)) >= MAX_TEMPLATES:
            raise HeraldError(
                f"This account has {MAX_TEMPLATES} templates, the most it may have; delete one first.",
                ErrorCode.TEMPLATE_LIMIT_REACHED,
            )
        now = iso(self._clock())
        template = Template(generate_id("tpl"), _name(name), 1, now, now)
        first = TemplateVersion(1, content, now, grant.actor.name)
        audit = self._entry(tenant_id, grant, AuditAction.TEMPLATE_CREATED, template, version="1")
        self._store.create(tenant_id, template, first, audit)
        return TemplateDetail(template, (first,))

    def update(
        self, tenant_id: str, grant: Grant, template_id: str, name: str | None, content: TemplateContent
    ) -> TemplateDetail:
        """A new draft version (the published one stays until the next publication)."""
        self._check(content)
        detail, now = self.get(tenant_id, template_id), iso(self._clock())
        number = detail.template.latest_version + 1
        template = replace(
            detail.template,
            name=_name(name) if name else detail.template.name,
            latest_version=number,
            updated_at=now,
        )
        version = TemplateVersion(number, content, now, grant.actor.name)
        dropped = _dropped(detail, number)
        audit = self._entry(tenant_id, grant, AuditAction.TEMPLATE_UPDATED, template, version=str(number))
        with _concurrent():
            self._store.add_version(tenant_id, template, version, dropped, audit)
        kept = tuple(v for v in detail.versions if v.version != dropped)
        return TemplateDetail(template, (*kept, version))

    def publish(self, tenant_id: str, grant: Grant, template_id: str, number: int | None) -> TemplateDetail:
        """Publish version ``number`` (None: the latest): sends without a version use it from now on."""
        detail, now = self.get(tenant_id, template_id), iso(self._clock())
        chosen = detail.template.latest_version if number is None else number
        version = detail.version(chosen)
        if version is None:
            raise version_not_found(template_id, chosen)
        template = replace(detail.template, published_version=chosen, published_at=now, updated_at=now)
        audit = self._entry(tenant_id, grant, AuditAction.TEMPLATE_PUBLISHED, template, version=str(chosen))
        with _concurrent():
            self._store.publish(tenant_id, template, version, audit)
        return TemplateDetail(template, detail.versions)

    def delete(self, tenant_id: str, grant: Grant, template_id: str) -> Template:
        detail = self.get(tenant_id, template_id)
        audit = self._entry(tenant_id, grant, AuditAction.TEMPLATE_DELETED, detail.template)
        with _concurrent():
            self._store.delete(tenant_id, detail, audit)
        return detail.template

    def preview(
        self, tenant_id: str, template_id: str, number: int | None, data: Mapping[str, Any]
    ) -> tuple[int, TemplateContent]:
        """The version's parts rendered with ``data`` (None: the latest, the draft being edited)."""
        detail = self.get(tenant_id, template_id)
        chosen = detail.template.latest_version if number is None else number
        version = detail.version(chosen)
        if version is None:
            raise version_not_found(template_id, chosen)
        return chosen, self._render(version.content, data)

    def render_email(self, tenant_id: str, email: EmailNotification) -> EmailNotification:
        """The email with the subject and parts its template renders from its data (the accept
        path: 1 GetItem, then the rendering)."""
        use = email.template
        if use is None or use.rendered:
            return email
        version = self._store.version(tenant_id, use.template_id, use.version)
        if version is None:
            raise _unusable(tenant_id, use, self._store)
        rendered = self._render(version.content, use.data or {})
        return replace(
            email,
            subject=rendered.subject,
            body=rendered.html,
            text=rendered.text,
            template=TemplateUse(use.template_id, version.version),
        )

    def _render(self, content: TemplateContent, data: Mapping[str, Any]) -> TemplateContent:
        try:
            rendered = self._engine.render(content, data)
        except TemplateFault as exc:
            raise HeraldError(exc.message, ErrorCode.TEMPLATE_RENDER_FAILED) from exc
        return _sendable(rendered)

    def _check(self, content: TemplateContent) -> None:
        _within_limits(content)
        try:
            self._engine.check(content)
        except TemplateFault as exc:
            raise HeraldError(exc.message, ErrorCode.TEMPLATE_INVALID) from exc

    def _entry(
        self, tenant_id: str, grant: Grant, action: AuditAction, template: Template, **details: str
    ) -> AuditEntry:
        return entry(
            tenant_id,
            iso(self._clock()),
            grant.actor,
            action,
            template.template_id,
            name=template.name,
            **details,
        )


def not_found(template_id: str) -> HeraldError:
    return HeraldError(f"There is no template {template_id}.", ErrorCode.TEMPLATE_NOT_FOUND)


def version_not_found(template_id: str, number: int) -> HeraldError:
    return HeraldError(
        f"Template {template_id} keeps no version {number} (it keeps its last {MAX_VERSIONS_KEPT}).",
        ErrorCode.TEMPLATE_NOT_FOUND,
    )


def _unusable(tenant_id: str, use: TemplateUse, store: TemplateStore) -> HeraldError:
    """Why a send's template cannot be read: no such version, or nothing published yet (a second
    read, only on this failing path)."""
    if use.version is not None:
        return version_not_found(use.template_id, use.version)
    if store.detail(tenant_id, use.template_id) is None:
        return not_found(use.template_id)
    return HeraldError(
        f"Template {use.template_id} has no published version: publish one, or name a version to send.",
        ErrorCode.TEMPLATE_NOT_PUBLISHED,
    )


def _sendable(rendered: TemplateContent) -> TemplateContent:
    """A rendered subject is one line, and neither it nor the HTML part may come out empty."""
    subject = " ".join(rendered.subject.split())
    if not subject or not rendered.html.strip():
        part = "subject" if not subject else "html"
        raise HeraldError(
            f"The template's {part} renders empty with this data.", ErrorCode.TEMPLATE_RENDER_FAILED
        )
    hidden = line_breaking_character(subject) or format_character(subject)
    if hidden is not None:
        raise HeraldError(
            f"The template's subject renders with a control or invisible character ({hidden}).",
            ErrorCode.TEMPLATE_RENDER_FAILED,
        )
    if len(subject) > MAX_SUBJECT_LENGTH:
        raise HeraldError(
            f"The template's subject renders longer than {MAX_SUBJECT_LENGTH} characters.",
            ErrorCode.TEMPLATE_RENDER_FAILED,
        )
    return replace(rendered, subject=subject)


def _within_limits(content: TemplateContent) -> None:
    parts = {"subject": content.subject, "html": content.html, "text": content.text or ""}
    for part, source in parts.items():
        if len(source.encode()) > MAX_SOURCE_BYTES:
            raise HeraldError(
                f"The template's {part} is longer than {MAX_SOURCE_BYTES} bytes.", ErrorCode.TEMPLATE_INVALID
            )


def _name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not cleaned or len(cleaned) > MAX_NAME_LENGTH:
        raise HeraldError(
            f"A template's name is 1 to {MAX_NAME_LENGTH} characters.", ErrorCode.VALIDATION_ERROR
        )
    return cleaned


def _dropped(detail: TemplateDetail, number: int) -> int | None:
    """The oldest version once more than ``MAX_VERSIONS_KEPT`` would be kept, unless it is the
    published one (which is kept as long as it stays published)."""
    kept = [v.version for v in detail.versions if v.version != detail.template.published_version]
    if len(detail.versions) < MAX_VERSIONS_KEPT or not kept:
        return None
    return min(kept) if min(kept) < number else None


@contextmanager
def _concurrent() -> Iterator[None]:
    """A concurrent change came first: the caller reads the template again and retries."""
    try:
        yield
    except TemplateChanged as exc:
        raise HeraldError(
            "The template changed meanwhile (another edit, publication or deletion); read it again.",
            ErrorCode.TEMPLATE_CHANGED,
        ) from exc
