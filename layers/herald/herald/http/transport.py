"""The headers every answer of the stack's origin carries, whichever function wrote it.

API answers hold tenants' data, sessions and once-shown secrets: no cache may keep them
(``Cache-Control: no-store``). On an https origin, browsers are told to use nothing else
(``Strict-Transport-Security``), so a first plain-http visit cannot be steered; never on the local
stack's ``http://127.0.0.1``, where it would mean nothing and would only linger in the browser.
"""

from __future__ import annotations

from typing import Any

# A year, as browsers' preload lists expect; no includeSubDomains: the origin may be one name of a
# tenant-run domain whose other hosts Herald knows nothing about.
HSTS = "max-age=31536000"


def secured(answer: dict[str, Any], origin: str, *, api: bool) -> dict[str, Any]:
    """``answer`` (API Gateway v2 shape) with the transport headers; ``api``: an answer of the API's
    routes rather than a console page or asset (which keep their own caching)."""
    headers = dict(answer.get("headers") or {})
    if api:
        headers["Cache-Control"] = "no-store"
    if origin.startswith("https://"):
        headers["Strict-Transport-Security"] = HSTS
    return {**answer, "headers": headers}
