"""Who calls a request: its API key, or else its console session. Both are read fresh every time."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from herald.domain.errors import ErrorCode, HeraldError

if TYPE_CHECKING:
    from herald.domain.records import TenantContext
    from herald.services.auth import Authenticator
    from herald.services.sessions import SessionAuthenticator


class Credentials(msgspec.Struct, frozen=True):
    """What a request presents to say who calls: an API key, or else a console session's token
    (the HTTP edge has checked that a state change by session comes from the console's origin)."""

    api_key: str | None = None
    session_token: str | None = None


class Callers:
    """The caller of a request, by its API key or its console session. ``sessions`` gives the
    session authenticator when the first request without a key needs it: API clients never do."""

    def __init__(self, keys: Authenticator, sessions: Callable[[], SessionAuthenticator]) -> None:
        self._keys = keys
        self._sessions = sessions

    def authenticate(self, credentials: Credentials) -> TenantContext:
        if credentials.api_key is not None:
            return self._keys.authenticate(credentials.api_key)
        if credentials.session_token is None:
            raise HeraldError("An API key is required (X-API-Key header).", ErrorCode.MISSING_API_KEY)
        return self._sessions().authenticate(credentials.session_token)
