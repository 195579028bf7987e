"""Failures chosen by the recipient's local part (case-insensitive; a ``+tag`` suffix is ignored so
tests can keep addresses unique):

- ``fail-<status>@…``: every provider answers ``<status>`` (400–599) with its real error body;
- ``fail-<status>-<provider>@…``: only that provider fails, the others accept;
- ``timeout@…`` / ``timeout-<provider>@…``: the answer (a 504 in the provider's error shape) comes
  only after the slow delay, which outlasts any client timeout;
- ``flaky-<n>@…``: the first ``n`` sends to this very address (its ``+tag`` included) answer 503 from
  every provider, later ones are accepted: a recipient that fails at first.

An outage (``PUT /_sandbox/outage``) overrides them all: every send answers its status.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass, field

from herald_local.sandbox.core.addresses import bare_address

# Any provider name: an address that names another provider, or one the sandbox lacks, leaves the send alone.
_FAIL = re.compile(r"^fail-(?P<status>[45]\d\d)(?:-(?P<provider>[a-z0-9]+))?(?:\+.*)?$")
_TIMEOUT = re.compile(r"^timeout(?:-(?P<provider>[a-z0-9]+))?(?:\+.*)?$")
_FLAKY = re.compile(r"^flaky-(?P<count>\d{1,2})(?:\+.*)?$")
FLAKY_STATUS = 503


@dataclass(frozen=True)
class Failure:
    """``status`` is None for a timeout."""

    status: int | None


def _local_part(address: str) -> str:
    return bare_address(address).rpartition("@")[0].lower()


def _applies(provider_in_name: str | None, provider: str) -> bool:
    return provider_in_name is None or provider_in_name == provider


@dataclass
class FlakySends:
    """How many sends each ``flaky-<n>`` address has had (shared by the sandbox's request threads)."""

    counts: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fails(self, address: str, count: int) -> bool:
        """Counts this send; True while it is among the first ``count``."""
        with self.lock:
            self.counts[address.lower()] += 1
            return self.counts[address.lower()] <= count


def failure_for(recipients: list[str], provider: str, flaky: FlakySends | None = None) -> Failure | None:
    """The failure the first matching recipient asks of ``provider``, if any."""
    for recipient in recipients:
        local = _local_part(recipient)
        flaky_count = _FLAKY.match(local)
        if flaky_count and flaky is not None:
            return Failure(FLAKY_STATUS) if flaky.fails(recipient, int(flaky_count.group("count"))) else None
        fail = _FAIL.match(local)
        if fail and _applies(fail.group("provider"), provider):
            return Failure(int(fail.group("status")))
        timeout = _TIMEOUT.match(local)
        if timeout and _applies(timeout.group("provider"), provider):
            return Failure(None)
    return None
