"""Reading the API key of a request: ``X-API-Key``, else ``Authorization: Bearer``; X-API-Key wins."""

from __future__ import annotations

from collections.abc import Mapping

from herald.domain.api_keys import API_KEY_PATTERN
from herald.domain.errors import ErrorCode, HeraldError


def extract_api_key(headers: Mapping[str, str]) -> str:
    lowered = {name.lower(): value for name, value in headers.items()}
    key = lowered.get("x-api-key")
    if key is None:
        scheme, _, token = lowered.get("authorization", "").partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else None
    if not key:
        raise HeraldError("An API key is required (X-API-Key header).", ErrorCode.MISSING_API_KEY)
    if not API_KEY_PATTERN.match(key.strip()):
        raise HeraldError(
            "The API key is malformed; expected hk_ followed by 64 hex digits.", ErrorCode.MALFORMED_API_KEY
        )
    return key.strip()
