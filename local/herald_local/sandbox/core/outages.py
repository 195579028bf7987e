"""Staged outages of one target for a while: an email provider (its service's name, in any case:
``SES``) or one hook name (``hook:<name>``) answers a status, or times out, until the outage ends or
is lifted.

- ``PUT /_sandbox/outages/<target> {"status": 500, "seconds": 300}``: every send to the target
  answers 500 for 300 s (without ``seconds``: until lifted); ``{"timeout": true}`` holds each answer
  past any client timeout instead.
- ``DELETE /_sandbox/outages/<target>`` lifts it; ``GET /_sandbox/outages`` lists those in force.

A staged outage wins over the failures a recipient or hook name chooses; the all-provider outage
(``PUT /_sandbox/outage``) wins over both.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from herald_local.sandbox.core.failures import Failure

HOOK_PREFIX = "hook:"


@dataclass(frozen=True)
class Outage:
    failure: Failure
    # Epoch seconds; None: until lifted.
    until: float | None

    def as_json(self, target: str) -> dict[str, object]:
        return {
            "target": target,
            "status": self.failure.status,
            "timeout": self.failure.status is None,
            "until": self.until,
        }


def target_key(target: str, providers: tuple[str, ...]) -> str | None:
    """The outage key of a target: one of ``providers`` (any letter case), or ``hook:<name>``;
    None for anything else."""
    if target.lower() in providers:
        return target.lower()
    return target if target.startswith(HOOK_PREFIX) and len(target) > len(HOOK_PREFIX) else None


class Outages:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._by_target: dict[str, Outage] = {}

    def start(self, target: str, failure: Failure, seconds: float | None) -> Outage:
        outage = Outage(failure, None if seconds is None else self._clock() + seconds)
        with self._lock:
            self._by_target[target] = outage
        return outage

    def lift(self, target: str) -> None:
        with self._lock:
            self._by_target.pop(target, None)

    def in_force(self) -> dict[str, Outage]:
        now = self._clock()
        with self._lock:
            return {
                target: outage
                for target, outage in self._by_target.items()
                if outage.until is None or outage.until > now
            }

    def failure(self, target: str) -> Failure | None:
        outage = self.in_force().get(target)
        return None if outage is None else outage.failure
