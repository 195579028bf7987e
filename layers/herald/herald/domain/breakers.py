"""Circuit breakers: when a provider or a webhook endpoint keeps failing, passes stop leading with it.

A breaker is a small value shared by every worker through the table. These rules decide its
transitions and never do I/O; the clock is an argument (epoch seconds), so tests pick the time.

- *closed*: calls go through. A provider's breaker trips on its failure rate over a sliding window
  (``PROVIDER_POLICY``: at least 50 % transient failures of at least 5 calls within 60 s); an
  endpoint's on consecutive transient failures (``ENDPOINT_POLICY``: 5 in a row).
- *open*: the provider is tried last / the endpoint's jobs wait, for a cool-down that starts at 30 s
  and doubles at every re-trip up to 10 minutes. When it ends the breaker is *half-open*: one worker
  claims the probe (a conditional write), the others keep treating it as open until the probe's lease
  runs out. The probe's success closes it; its failure re-opens it with a doubled cool-down.
- *disabled* (endpoints only): still failing ``disable_after_seconds`` (5 days) after it first
  opened. Only the tenant re-enables it.

A success of a closed breaker changes nothing that is stored (``succeeded`` answers None): a
provider's successes are counted in the worker and carried to the table by its next failure write.
"""

from __future__ import annotations

from enum import StrEnum
from urllib.parse import urlsplit

import msgspec
from msgspec.structs import replace


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    DISABLED = "disabled"


class BreakerKind(StrEnum):
    PROVIDER = "provider"
    ENDPOINT = "endpoint"
    # A subscription's endpoint: one breaker per subscription (its name is the subscription id),
    # under the endpoint policy; two subscriptions on one origin fail and recover apart.
    SUBSCRIPTION = "subscription"


class BreakerKey(msgspec.Struct, frozen=True):
    kind: BreakerKind
    # None: one of the platform's own providers (free-plan mail).
    tenant_id: str | None
    # The provider's name, or the endpoint's origin (scheme://host[:port]).
    name: str


def endpoint_origin(url: str) -> str:
    """What an endpoint breaker is keyed by: scheme, host and port of the URL, lower-cased (one
    receiver's outage takes all its paths down with it)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port and parts.port != 443 else ""
    return f"{parts.scheme.lower()}://{host}{port}"


class BreakerPolicy(msgspec.Struct, frozen=True):
    # Trip on this many consecutive failures; None: on the failure rate over the window.
    consecutive_failures: int | None = None
    window_seconds: int = 60
    slot_seconds: int = 10
    min_calls: int = 5
    failure_ratio: float = 0.5
    base_cooldown_seconds: int = 30
    max_cooldown_seconds: int = 600
    # How long a claimed probe keeps the others out (longer than one provider call or webhook).
    probe_lease_seconds: int = 30
    # Open that long without a successful probe: disabled (None: never).
    disable_after_seconds: int | None = None


PROVIDER_POLICY = BreakerPolicy()
ENDPOINT_POLICY = BreakerPolicy(consecutive_failures=5, disable_after_seconds=5 * 24 * 3600)


class Slot(msgspec.Struct, frozen=True):
    """The calls of one ``slot_seconds`` stretch of the window."""

    start: int
    failures: int = 0
    successes: int = 0


class Breaker(msgspec.Struct, frozen=True):
    key: BreakerKey
    state: BreakerState = BreakerState.CLOSED
    slots: tuple[Slot, ...] = ()
    consecutive: int = 0
    # Epoch seconds: when the current open stretch began, when its cool-down ends, until when a
    # claimed probe holds it.
    opened_at: int | None = None
    open_until: int | None = None
    cooldown_seconds: int = 0
    probe_until: int | None = None
    last_error: str | None = None
    # When the state last changed (epoch seconds; None: never tripped).
    since: int | None = None
    # Bumped by every stored change: writes are conditional on the version they read.
    version: int = 0

    def holds_back(self, now: int) -> bool:
        """Open (or disabled) and no probe is due: callers go around it."""
        if self.state is BreakerState.CLOSED:
            return False
        if self.state is BreakerState.DISABLED:
            return True
        return now < (self.open_until or 0) or now < (self.probe_until or 0)

    def probe_due(self, now: int) -> bool:
        return self.state is BreakerState.OPEN and not self.holds_back(now)

    def wait_seconds(self, now: int) -> int:
        """How long until a probe may be claimed (0: now)."""
        return max((self.open_until or 0) - now, (self.probe_until or 0) - now, 0)


def claim_probe(breaker: Breaker, now: int, policy: BreakerPolicy) -> Breaker:
    """The breaker with this worker's probe claimed (store it conditionally on ``breaker.version``)."""
    return replace(breaker, probe_until=now + policy.probe_lease_seconds, version=breaker.version + 1)


def failed(
    breaker: Breaker,
    now: int,
    error: str,
    policy: BreakerPolicy,
    *,
    successes: int = 0,
    probing: bool = False,
) -> Breaker | None:
    """The breaker after a transient failure (``successes``: the worker's successes not stored yet);
    None when nothing stored changes (a failure of a breaker already open, not its probe's)."""
    if breaker.state is BreakerState.DISABLED:
        return None
    if breaker.state is BreakerState.OPEN:
        return _reopened(breaker, now, error, policy) if probing else None
    by_rate = policy.consecutive_failures is None
    counted = replace(
        breaker,
        slots=_counted(breaker.slots, now, policy, successes=successes) if by_rate else (),
        consecutive=0 if by_rate else breaker.consecutive + 1,
        last_error=error,
        version=breaker.version + 1,
    )
    return _opened(counted, now, policy) if _trips(counted, now, policy) else counted


def succeeded(breaker: Breaker, now: int) -> Breaker | None:
    """The breaker after a success; None when nothing stored changes (closed, no streak to end)."""
    if breaker.state is BreakerState.CLOSED and breaker.consecutive == 0:
        return None
    if breaker.state is BreakerState.DISABLED:
        return None
    return closed(breaker, now)


def closed(breaker: Breaker, now: int) -> Breaker:
    """Back to closed with a clean record (a successful probe, or the tenant re-enabling it)."""
    return Breaker(
        key=breaker.key,
        last_error=breaker.last_error,
        since=now if breaker.state is not BreakerState.CLOSED else breaker.since,
        version=breaker.version + 1,
    )


def disabled(breaker: Breaker, now: int) -> Breaker:
    """Disabled by the tenant: its jobs fail with endpoint_disabled, as after days of failures,
    until the tenant enables it again. The last error stays, for the record."""
    return replace(
        breaker,
        state=BreakerState.DISABLED,
        open_until=None,
        probe_until=None,
        since=now,
        version=breaker.version + 1,
    )


def failure_ratio(breaker: Breaker, now: int, policy: BreakerPolicy) -> tuple[int, int]:
    """(failures, calls) within the window ending ``now``."""
    live = [slot for slot in breaker.slots if slot.start > now - policy.window_seconds]
    failures = sum(slot.failures for slot in live)
    return failures, failures + sum(slot.successes for slot in live)


def _trips(breaker: Breaker, now: int, policy: BreakerPolicy) -> bool:
    if policy.consecutive_failures is not None:
        return breaker.consecutive >= policy.consecutive_failures
    failures, calls = failure_ratio(breaker, now, policy)
    return calls >= policy.min_calls and failures >= policy.failure_ratio * calls


def _counted(slots: tuple[Slot, ...], now: int, policy: BreakerPolicy, *, successes: int) -> tuple[Slot, ...]:
    """The window's slots with one more failure (and the worker's unstored successes) now."""
    start = now - now % policy.slot_seconds
    live = [slot for slot in slots if slot.start > now - policy.window_seconds and slot.start != start]
    current = next((slot for slot in slots if slot.start == start), Slot(start))
    current = replace(current, failures=current.failures + 1, successes=current.successes + successes)
    return (*live, current)


def _opened(breaker: Breaker, now: int, policy: BreakerPolicy) -> Breaker:
    cooldown = policy.base_cooldown_seconds
    return replace(
        breaker,
        state=BreakerState.OPEN,
        slots=(),
        opened_at=now,
        open_until=now + cooldown,
        cooldown_seconds=cooldown,
        probe_until=None,
        since=now,
    )


def _reopened(breaker: Breaker, now: int, error: str, policy: BreakerPolicy) -> Breaker:
    opened_at = breaker.opened_at if breaker.opened_at is not None else now
    if policy.disable_after_seconds is not None and now - opened_at >= policy.disable_after_seconds:
        return replace(
            breaker,
            state=BreakerState.DISABLED,
            open_until=None,
            probe_until=None,
            last_error=error,
            since=now,
            version=breaker.version + 1,
        )
    cooldown = min(
        max(breaker.cooldown_seconds, policy.base_cooldown_seconds) * 2, policy.max_cooldown_seconds
    )
    return replace(
        breaker,
        opened_at=opened_at,
        open_until=now + cooldown,
        cooldown_seconds=cooldown,
        probe_until=None,
        last_error=error,
        version=breaker.version + 1,
    )
