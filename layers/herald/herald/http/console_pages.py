"""The console's page and assets, served from the files shipped in the ConsoleFunction's folder.

``/console`` and every path under it that names no asset answer the one page (the front end routes
itself); ``/console/assets/<file>`` answers that file. ``/portal`` answers the portal's page (a
tenant's customer managing its own subscriptions, ``herald.domain.portal``), built from the same
assets under the same rules. Only files of the asset folder with a known
type are served, never anything outside it. Every answer carries the console's security headers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from herald.domain.portal import PORTAL_PAGE

# The console's pages and assets: scripts and styles only from its own files (no inline script or
# style, nothing from a third party), never framed, no referrer sent anywhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}


ASSETS_PREFIX = "/console/assets/"
PAGE = "index.html"
PORTAL_FILE = "portal.html"
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


def is_console_path(path: str) -> bool:
    return path in ("/console", PORTAL_PAGE) or path.startswith("/console/")


def _answer(status: int, media_type: str, body: str, cache: str) -> dict[str, Any]:
    headers = {**PAGE_HEADERS, "Content-Type": media_type, "Cache-Control": cache}
    return {"statusCode": status, "headers": headers, "body": body, "isBase64Encoded": False}


def console_answer(folder: Path, method: str, path: str) -> dict[str, Any]:
    """The answer (API Gateway v2 shape) to a request for the page or one of its assets; HEAD gets
    GET's status and headers without the body."""
    if method not in ("GET", "HEAD"):
        answer = _answer(405, "text/plain; charset=utf-8", "Method not allowed\n", "no-store")
        answer["headers"]["Allow"] = "GET, HEAD"
        return answer
    answer = _got(folder, path)
    return {**answer, "body": ""} if method == "HEAD" else answer


def _got(folder: Path, path: str) -> dict[str, Any]:
    if not path.startswith(ASSETS_PREFIX):
        # The page holds no data of its own: everything comes from the API after it loaded.
        page = PORTAL_FILE if path == PORTAL_PAGE else PAGE
        return _answer(200, MEDIA_TYPES[".html"], (folder / page).read_text(encoding="utf-8"), "no-cache")
    name = path.removeprefix(ASSETS_PREFIX)
    asset = folder / "assets" / name
    media_type = MEDIA_TYPES.get(asset.suffix)
    if "/" in name or name.startswith(".") or media_type is None or not asset.is_file():
        return _answer(404, "text/plain; charset=utf-8", "Not found\n", "no-store")
    return _answer(200, media_type, asset.read_text(encoding="utf-8"), "no-cache")
