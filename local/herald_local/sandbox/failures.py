"""Failures chosen by the recipient's local part (case-insensitive; a ``+tag`` suffix is ignored so
tests can keep addresses unique):

- ``fail-<status>@…``: every provider answers ``<status>`` (400–599) with its real error body;
- ``fail-<status>-<provider>@…``: only that provider fails, the others accept;
- ``timeout@…`` / ``timeout-<provider>@…``: the answer (a 504 in the provider's error shape) comes
  only after the slow delay, which outlasts any client timeout.

An outage (``PUT /_sandbox/outage``) overrides them all: every send answers its status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from herald_local.sandbox.addresses import bare_address
from herald_local.sandbox.records import ProviderName

_PROVIDERS = "|".join(name.value for name in ProviderName)
_FAIL = re.compile(rf"^fail-(?P<status>[45]\d\d)(?:-(?P<provider>{_PROVIDERS}))?(?:\+.*)?$")
_TIMEOUT = re.compile(rf"^timeout(?:-(?P<provider>{_PROVIDERS}))?(?:\+.*)?$")


@dataclass(frozen=True)
class Failure:
    """``status`` is None for a timeout."""

    status: int | None


def _local_part(address: str) -> str:
    return bare_address(address).rpartition("@")[0].lower()


def _applies(provider_in_name: str | None, provider: ProviderName) -> bool:
    return provider_in_name is None or provider_in_name == provider.value


def failure_for(recipients: list[str], provider: ProviderName) -> Failure | None:
    """The failure the first matching recipient asks of ``provider``, if any."""
    for recipient in recipients:
        local = _local_part(recipient)
        fail = _FAIL.match(local)
        if fail and _applies(fail.group("provider"), provider):
            return Failure(int(fail.group("status")))
        timeout = _TIMEOUT.match(local)
        if timeout and _applies(timeout.group("provider"), provider):
            return Failure(None)
    return None
