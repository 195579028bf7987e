"""The exact bytes a client sent, from an API Gateway v2 (HTTP API) event.

Webhook signatures are computed over these bytes, so they are taken before anything parses the
body: re-serialised JSON differs in spacing, key order and escapes. API Gateway hands a binary body
over in base64 (``isBase64Encoded``) and a text body as text, which UTF-8 turns back into the bytes
that arrived.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any


def raw_body(event: Mapping[str, Any]) -> bytes:
    body: str = event.get("body") or ""
    if event.get("isBase64Encoded"):
        return base64.b64decode(body)
    return body.encode("utf-8")
