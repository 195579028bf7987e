"""Files sent with an email: what may be attached, how large, and how the job refers to them.

A tenant's attachment arrives inline (base64) or as an https URL Herald fetches at accept; either
way it is stored once in the attachments bucket and the job carries only its reference (name, type,
size, SHA-256, object key). The worker reads the content back for each pass and hands it to every
provider of the pass in that provider's format.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

import msgspec

from herald.domain.vendors import ProviderName, message_limit

MAX_ATTACHMENTS = 10
MAX_FILENAME_CHARACTERS = 255
# Room kept in a provider's message size for what is not an attachment: the HTML and text bodies
# (256 KiB each at most), the headers and the MIME or JSON framing around them.
MESSAGE_RESERVE_BYTES = 1024 * 1024

# The content types an attachment may have, with what they hold. Documents, images, tables and
# calendar invitations: what transactional mail carries. Everything else is refused, executables,
# scripts and HTML among them (HTML can run script when a mail client or browser opens it).
ALLOWED_TYPES: Mapping[str, str] = {
    "application/pdf": "PDF document",
    "image/png": "PNG image",
    "image/jpeg": "JPEG image",
    "image/gif": "GIF image",
    "image/webp": "WebP image",
    "text/plain": "plain text",
    "text/csv": "CSV table",
    "text/calendar": "calendar invitation (iCalendar)",
    "application/msword": "Word document (.doc)",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document (.docx)",
    "application/vnd.ms-excel": "Excel workbook (.xls)",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel workbook (.xlsx)",
    "application/vnd.ms-powerpoint": "PowerPoint presentation (.ppt)",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint presentation"
    " (.pptx)",
    "application/vnd.oasis.opendocument.text": "OpenDocument text (.odt)",
    "application/vnd.oasis.opendocument.spreadsheet": "OpenDocument spreadsheet (.ods)",
    "application/zip": "ZIP archive",
}
# Characters a file name may not hold: path separators (a name is never a path on the recipient's
# disk) and what Windows refuses in a name, which mail clients save under.
_UNSAFE_IN_NAME = re.compile(r'[/\\:*?"<>|]')


class AttachmentUpload(msgspec.Struct, frozen=True, kw_only=True):
    """An attachment as the request brings it: its content, or the https URL to fetch it from."""

    filename: str
    content_type: str
    content: bytes | None = None
    url: str | None = None


class Attachment(msgspec.Struct, frozen=True, kw_only=True):
    """A stored attachment as the job refers to it. ``content`` is filled only in memory, by the
    worker that read it back for a pass; the job and its queue message never carry it."""

    filename: str
    content_type: str
    size: int
    sha256: str
    key: str
    content: bytes | None = None


class AttachmentRefused(ValueError):
    """An attachment Herald does not accept; the message is safe to show the tenant."""


class AttachmentTooLarge(Exception):
    """A fetched attachment that went past the size it was allowed."""


class AttachmentUnavailable(Exception):
    """An attachment URL that gave no file (an error status, a redirect, a timeout, too large); the
    message is safe to show the tenant."""


def refused_type(content_type: str) -> str | None:
    """Why ``content_type`` may not be attached; None when it may. Written exactly as listed (lower
    case, no parameters), as the OpenAPI document's enum has it: what is checked is what is sent."""
    if content_type in ALLOWED_TYPES:
        return None
    return f"content type {content_type[:100]} is not allowed"


def clean_filename(name: str) -> str:
    """``name`` as a file name a recipient's client can save safely: its last path segment, without
    control or format characters (so never longer than ``name``); raises ``AttachmentRefused`` when
    nothing usable remains."""
    base = re.split(r"[/\\]", name)[-1]
    kept = "".join(char for char in base if unicodedata.category(char)[0] != "C")
    kept = _UNSAFE_IN_NAME.sub("_", kept).strip().strip(".")
    if not kept:
        raise AttachmentRefused(f"file name {name[:64]!r} holds no usable character")
    return kept


def allowance(provider: ProviderName) -> int:
    """The attachments' total size (decoded bytes) a provider's message size leaves: providers count
    the base64 form, four bytes for every three."""
    return (message_limit(provider) - MESSAGE_RESERVE_BYTES) * 3 // 4


def size_cap(order: Sequence[ProviderName]) -> tuple[int, ProviderName]:
    """The largest total every provider of ``order`` can carry, and the provider that sets it (the
    first of the smallest), so a fallback never meets an email its provider must refuse."""
    provider = min(order, key=allowance)
    return allowance(provider), provider


def object_key(retention_days: int, tenant_id: str, sha256: str) -> str:
    """Where an attachment is stored: under its retention class (the bucket's lifecycle rule of
    that class deletes it), then the tenant, then its content's hash, so the same file sent again
    is stored once and a retried request names the same object."""
    return f"attachments/{retention_days}d/{tenant_id}/{sha256}"


def megabytes(size: int) -> str:
    """A size as a person reads it: ``6.7 MB``."""
    return f"{size / 1_000_000:.1f} MB"
