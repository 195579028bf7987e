"""An email's attachments at accept: fetched (URL ones), held to the size its providers can carry,
and stored once in the attachments bucket, so the job carries references only.

Costs per attachment: one S3 PutObject here (and its expiry by the bucket's lifecycle rule later);
no DynamoDB unit beyond the reference's bytes in the job item. A URL attachment also costs one
outbound GET, bounded in time and size.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from msgspec.structs import replace

from herald.domain.account import TenantContext
from herald.domain.attachments import (
    Attachment,
    AttachmentTooLarge,
    AttachmentUnavailable,
    AttachmentUpload,
    megabytes,
    object_key,
    size_cap,
)
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.notifications import EmailNotification, NotificationRequest
from herald.domain.plans import limits_for
from herald.domain.vendors import PLATFORM_PROVIDERS, ProviderName, provider_label
from herald.domain.webhooks import UrlNotAllowed

if TYPE_CHECKING:
    from herald.services.ports.platform import AttachmentFetcher, AttachmentStore

# A file as the intake holds it between reading and storing.
Upload = tuple[AttachmentUpload, bytes]


def pass_order(tenant: TenantContext, email: EmailNotification) -> tuple[ProviderName, ...]:
    """The providers a delivery pass of ``email`` may go through, as the worker will order them."""
    if not limits_for(tenant.plan).own_providers:
        return PLATFORM_PROVIDERS
    return email.forced_providers() or tuple(ProviderName(name) for name in tenant.providers)


class AttachmentIntake:
    def __init__(self, store: AttachmentStore, fetch: AttachmentFetcher) -> None:
        self._store = store
        self._fetch = fetch

    def read(self, tenant: TenantContext, email: EmailNotification) -> list[Upload]:
        """Every upload of ``email`` with its content (URL ones fetched), within the size cap of
        the tenant's providers; raises ``HeraldError`` (400) naming what is refused."""
        uploads = [item for item in email.attachments if isinstance(item, AttachmentUpload)]
        if not uploads:
            return []
        # Never empty: the routing check has refused a paid tenant without providers already.
        cap, provider = size_cap(pass_order(tenant, email))
        files: list[Upload] = []
        for upload in uploads:
            used = sum(len(content) for _, content in files)
            try:
                content = upload.content if upload.content is not None else self._fetched(upload, cap - used)
            except AttachmentTooLarge as exc:
                raise _too_large(f"more than {megabytes(cap)}", cap, provider) from exc
            files.append((upload, content))
        total = sum(len(content) for _, content in files)
        if total > cap:
            raise _too_large(megabytes(total), cap, provider)
        return files

    def store(
        self, tenant: TenantContext, request: NotificationRequest, read: Sequence[Upload]
    ) -> NotificationRequest:
        """``request`` with its uploads stored and replaced by their references; raises
        ``DependencyError`` when the bucket cannot be reached."""
        email = request.notification
        if not read or not isinstance(email, EmailNotification):
            return request
        retention = limits_for(tenant.plan).retention_days
        stored = tuple(self._stored(tenant.tenant_id, retention, upload, content) for upload, content in read)
        return replace(request, notification=replace(email, attachments=stored))

    def _stored(
        self, tenant_id: str, retention_days: int, upload: AttachmentUpload, content: bytes
    ) -> Attachment:
        digest = hashlib.sha256(content).hexdigest()
        key = object_key(retention_days, tenant_id, digest)
        self._store.put(key, content, upload.content_type)
        return Attachment(
            filename=upload.filename,
            content_type=upload.content_type,
            size=len(content),
            sha256=digest,
            key=key,
        )

    def _fetched(self, upload: AttachmentUpload, room: int) -> bytes:
        url = upload.url or ""
        try:
            return self._fetch(url, max(room, 0))
        except UrlNotAllowed as exc:
            raise HeraldError(
                f"The attachment URL of {upload.filename} is not allowed: {exc.reason}",
                ErrorCode.URL_NOT_ALLOWED,
            ) from exc
        except AttachmentUnavailable as exc:
            raise HeraldError(
                f"The attachment URL of {upload.filename} gave no file: {exc}",
                ErrorCode.ATTACHMENT_UNAVAILABLE,
            ) from exc


def _too_large(total: str, cap: int, provider: ProviderName) -> HeraldError:
    label = provider_label(provider)
    return HeraldError(
        f"The attachments total {total}; at most {megabytes(cap)} fit in a message to"
        f" {label}, the provider with the smallest message size in this email's fallback order.",
        ErrorCode.ATTACHMENT_TOO_LARGE,
        extra={"limit": cap, "provider": provider.value},
    )
