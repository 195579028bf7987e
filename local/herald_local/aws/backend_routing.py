"""Makes moto's server find a request's backend once per host instead of on every request.

moto's server picks the backend for each request under one process-wide lock, and to do so lists
its own package folder on disk (``backends.list_of_moto_modules``: a ``listdir`` and some 200
``isdir`` calls) before trying its URL patterns. Under the load tests that was about a sixth of
moto's time, all of it serialised. The backend a host maps to cannot change while the server runs,
so each host's answer is remembered after its first request.
"""

from __future__ import annotations

import functools
from typing import Any

_PATCHED = "_herald_remembers_backends"
_REMEMBERED = "_herald_backend_by_host"


def remember_backends_per_host() -> None:
    """Memoise ``DomainDispatcherApplication.get_backend_for_host`` per host (idempotent)."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    if getattr(DomainDispatcherApplication, _PATCHED, False):
        return
    find = DomainDispatcherApplication.get_backend_for_host

    @functools.wraps(find)
    def backend_for_host(self: DomainDispatcherApplication, host: str | None) -> Any:
        # Called under the dispatcher's own lock: no second lock needed around the dict.
        remembered: dict[str | None, Any] = self.__dict__.setdefault(_REMEMBERED, {})
        if host not in remembered:
            remembered[host] = find(self, host)
        return remembered[host]

    DomainDispatcherApplication.get_backend_for_host = backend_for_host  # type: ignore[method-assign]
    setattr(DomainDispatcherApplication, _PATCHED, True)
