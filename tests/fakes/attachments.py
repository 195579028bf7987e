"""An in-memory attachments bucket and URL fetcher, in place of S3 and the guarded GET."""

from __future__ import annotations

from collections.abc import Mapping

from herald.domain.attachments import AttachmentTooLarge, AttachmentUnavailable
from herald.domain.errors import DependencyError
from herald.domain.webhooks import UrlNotAllowed
from herald.services.ports.platform import AttachmentFetcher, AttachmentStore


class FakeAttachmentStore:
    def __init__(self) -> None:
        # key -> (content, content type)
        self.objects: dict[str, tuple[bytes, str]] = {}
        self.puts = 0
        self.down = False

    def put(self, key: str, content: bytes, content_type: str) -> None:
        if self.down:
            raise DependencyError("attachments bucket: unreachable")
        self.puts += 1
        self.objects[key] = (content, content_type)

    def get(self, key: str) -> bytes:
        if self.down:
            raise DependencyError("attachments bucket: unreachable")
        return self.objects[key][0]


class FakeFetcher:
    """Serves ``files`` by URL; any other URL is refused as the SSRF guard refuses a private host."""

    def __init__(self, files: Mapping[str, bytes] | None = None) -> None:
        self.files = dict(files or {})
        self.fetched: list[str] = []

    def __call__(self, url: str, limit: int) -> bytes:
        self.fetched.append(url)
        if not url.startswith("https://"):
            raise UrlNotAllowed("only https:// URLs are allowed")
        if url not in self.files:
            raise AttachmentUnavailable("the URL answered status 404")
        if len(self.files[url]) > limit:
            raise AttachmentTooLarge
        return self.files[url]


# mypy holds the fakes to the ports they stand in for.
_STORE: AttachmentStore = FakeAttachmentStore()
_FETCHER: AttachmentFetcher = FakeFetcher()
