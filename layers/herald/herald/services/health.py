"""Provider and endpoint health as the delivery passes see it: which providers a pass tries last,
which endpoints' jobs wait, and what each call's outcome does to the shared breakers.

The breakers are read with what a pass reads anyway (a tenant's provider breakers live in its
partition, read by the pass's one Query; an endpoint's is read with the tenant's profile in one
BatchGetItem) and written only on transient failures and state changes (``herald.domain.breakers``):
a healthy provider or endpoint costs no write. A write is conditional on the version it read; on a
conflict the breaker is read again and the change re-applied once, because another worker's change
(a trip, a probe claimed) is what this one must build on.

The successes of a provider's closed breaker are counted in the worker (no write) and carried to the
table by that worker's next failure write of the same breaker, so the failure rate counts them without
a write per success. Nothing about a tenant is cached: this is a tally of calls this worker made.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

import msgspec

from herald.domain.account import TenantContext, TenantProfile
from herald.domain.audit import AuditAction, entry
from herald.domain.breakers import (
    Breaker,
    BreakerKey,
    BreakerKind,
    BreakerPolicy,
    BreakerState,
    claim_probe,
    closed,
    disabled,
    endpoint_origin,
    failed,
    succeeded,
)
from herald.domain.clock import iso
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.observability import count, logger
from herald.services.ports.platform import PlatformMail
from herald.services.ports.providers import Breakers

MOVED_BACK = "moved back"
BREAKER_OPEN = "breaker open"


class ProviderPlan(msgspec.Struct):
    """One pass's provider order after the breakers had their say."""

    order: list[str]
    breakers: dict[str, Breaker]
    moved_back: list[str] = msgspec.field(default_factory=list)
    probing: set[str] = msgspec.field(default_factory=set)
    # False where a breaker cannot reorder anything (one provider, breakers off): nothing is recorded.
    tracked: bool = True


class BreakerBoard:
    """Reads and changes breakers of one kind; every change goes through ``apply``."""

    def __init__(
        self,
        breakers: Breakers,
        policy: BreakerPolicy,
        *,
        enabled: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.breakers = breakers
        self.policy = policy
        self.enabled = enabled
        self._clock = clock

    def now(self) -> int:
        return int(self._clock())

    def read(self, keys: Sequence[BreakerKey]) -> dict[BreakerKey, Breaker]:
        """The stored breakers of ``keys`` (a fresh closed one where none is stored)."""
        if not keys:
            return {}
        return _with_defaults(self.breakers.read(keys), keys)

    def claim_probe(self, breaker: Breaker) -> Breaker | None:
        """The breaker with this worker's half-open probe claimed, or None when another worker holds
        it (one probe at a time)."""
        claimed = claim_probe(breaker, self.now(), self.policy)
        try:
            return claimed if self.breakers.save(claimed) else None
        except DependencyError as exc:
            logger.warning("breaker probe claim failed", extra={"reason": str(exc)})
            return None

    def apply(self, breaker: Breaker, change: Callable[[Breaker], Breaker | None]) -> Breaker | None:
        """Store ``change(breaker)``; on a conflict re-read and re-apply once. The stored result, or
        None when nothing needed a write (or the table did not answer: health is advice, the
        delivery's own outcome is recorded regardless)."""
        current = breaker
        for _ in range(2):
            changed = change(current)
            if changed is None:
                return None
            try:
                if self.breakers.save(changed):
                    if changed.state is not current.state:
                        count(
                            "BreakerChanged", {"kind": breaker.key.kind.value, "state": changed.state.value}
                        )
                    return changed
                current = self.read([breaker.key])[breaker.key]
            except DependencyError as exc:
                logger.warning("breaker write failed", extra={"reason": str(exc)})
                return None
        return None


def _with_defaults(
    found: Mapping[BreakerKey, Breaker], keys: Sequence[BreakerKey]
) -> dict[BreakerKey, Breaker]:
    return {key: found.get(key) or Breaker(key) for key in keys}


class ProviderHealth:
    """The providers' breakers: reorders a pass, then learns from each call of it."""

    def __init__(self, board: BreakerBoard) -> None:
        self._board = board
        # Successes not stored yet, by breaker: (when the first of them happened, how many).
        self._unstored_successes: dict[BreakerKey, tuple[int, int]] = {}

    def plan(
        self, order: Sequence[str], tenant_id: str | None, stored: Sequence[Breaker] = ()
    ) -> ProviderPlan:
        """``order`` with the providers whose breaker is open moved to the end (kept in their order),
        and due probes claimed. ``stored``: the breakers the pass read already (a tenant's); the
        platform's are read here, and only when the order has something to reorder."""
        keys = {name: BreakerKey(BreakerKind.PROVIDER, tenant_id, name) for name in order}
        if not self._board.enabled or len(order) < 2:
            return ProviderPlan(list(order), {}, tracked=False)
        known = {breaker.key: breaker for breaker in stored}
        if tenant_id is None:
            known = self._board.read(list(keys.values()))
        breakers = {name: known.get(key) or Breaker(key) for name, key in keys.items()}
        plan = ProviderPlan([], breakers)
        now = self._board.now()
        for name in order:
            breaker = breakers[name]
            probe = self._board.claim_probe(breaker) if breaker.probe_due(now) else None
            if probe is not None:
                plan.probing.add(name)
                breakers[name] = probe
            elif breaker.state is not BreakerState.CLOSED:
                plan.moved_back.append(name)
                continue
            plan.order.append(name)
        if plan.moved_back:
            count("ProviderMovedBack", {}, value=len(plan.moved_back))
        plan.order.extend(plan.moved_back)
        return plan

    def succeeded(self, plan: ProviderPlan, name: str) -> None:
        if not plan.tracked:
            return
        breaker = plan.breakers[name]
        if self._board.apply(breaker, lambda current: succeeded(current, self._board.now())) is None:
            self._keep_successes(breaker.key, 1)

    def failed(self, plan: ProviderPlan, name: str, error: str) -> None:
        """A transient failure of ``name`` in this pass."""
        if not plan.tracked:
            return
        breaker = plan.breakers[name]
        successes = self._take_successes(breaker.key)
        stored = self._board.apply(
            breaker,
            lambda current: failed(
                current,
                self._board.now(),
                error,
                self._board.policy,
                successes=successes,
                probing=name in plan.probing,
            ),
        )
        if stored is None and successes:
            self._keep_successes(breaker.key, successes)

    def _keep_successes(self, key: BreakerKey, successes: int) -> None:
        now = self._board.now()
        since, kept = self._take_since(key, now)
        self._unstored_successes[key] = (since, kept + successes)

    def _take_successes(self, key: BreakerKey) -> int:
        return self._take_since(key, self._board.now())[1]

    def _take_since(self, key: BreakerKey, now: int) -> tuple[int, int]:
        """The unstored successes of ``key`` still inside the window (older ones no longer count)."""
        since, kept = self._unstored_successes.pop(key, (now, 0))
        return (since, kept) if now - since < self._board.policy.window_seconds else (now, 0)


class Gate(msgspec.Struct, frozen=True):
    """What a webhook pass may do with its endpoint: send (as the probe, or normally), wait, or fail."""

    send: bool
    probing: bool = False
    defer_seconds: int | None = None
    disabled: bool = False


# SQS's longest message delay; a longer cool-down is waited out in several deferrals.
MAX_DEFER_SECONDS = 900
# While another worker's probe runs, wait a little: its outcome decides soon.
PROBE_WAIT_SECONDS = 5


class EndpointPass(msgspec.Struct, frozen=True):
    """What a webhook pass reads before it sends: the tenant's profile and its endpoint's breaker."""

    profile: TenantProfile
    breaker: Breaker


class EndpointHealth:
    """The webhook endpoints' breakers: which jobs go out, and what the tenant is told."""

    def __init__(self, board: BreakerBoard, mail: PlatformMail) -> None:
        self._board = board
        self._mail = mail

    @property
    def enabled(self) -> bool:
        return self._board.enabled

    def with_profile(self, tenant_id: str, url: str) -> EndpointPass:
        """The tenant's profile and the breaker of ``url``'s origin, in one read."""
        key = BreakerKey(BreakerKind.ENDPOINT, tenant_id, endpoint_origin(url))
        profile, breaker = self._board.breakers.with_profile(tenant_id, key)
        return EndpointPass(profile, breaker or Breaker(key))

    def endpoints(self, tenant_id: str) -> list[Breaker]:
        return self._board.breakers.endpoints(tenant_id)

    def gate(self, breaker: Breaker) -> Gate:
        now = self._board.now()
        if not self.enabled or breaker.state is BreakerState.CLOSED:
            return Gate(send=True)
        if breaker.state is BreakerState.DISABLED:
            return Gate(send=False, disabled=True)
        if breaker.probe_due(now) and self._board.claim_probe(breaker) is not None:
            return Gate(send=True, probing=True)
        wait = breaker.wait_seconds(now) or PROBE_WAIT_SECONDS
        return Gate(send=False, defer_seconds=min(wait, MAX_DEFER_SECONDS))

    def succeeded(self, breaker: Breaker) -> None:
        if self.enabled:
            self._board.apply(breaker, lambda current: succeeded(current, self._board.now()))

    def failed(
        self, breaker: Breaker, error: str, gate: Gate, tenant_email: str, *, url: str | None = None
    ) -> Breaker | None:
        """A transient failure of the endpoint (the receiver's outage): the breaker as stored now
        (None: unchanged). The tenant hears once, when it turns disabled (the one worker whose
        conditional write made it so sends the mail). ``url``: the delivery's, named in that mail."""
        if not self.enabled:
            return None
        stored = self._board.apply(
            breaker,
            lambda current: failed(
                current, self._board.now(), error, self._board.policy, probing=gate.probing
            ),
        )
        if stored is not None and stored.state is BreakerState.DISABLED:
            self._tell_disabled(stored, tenant_email, url)
        return stored

    def _tell_disabled(self, breaker: Breaker, tenant_email: str, url: str | None) -> None:
        name = breaker.key.name
        opened = iso(datetime.fromtimestamp(breaker.opened_at or self._board.now(), UTC))
        failing = f"it has failed every delivery since {opened} (last error: {breaker.last_error})."
        if breaker.key.kind is BreakerKind.SUBSCRIPTION:
            subject = f"Webhook subscription disabled: {name}"
            text = (
                f"Herald disabled your webhook subscription {name}{f' ({url})' if url else ''}: {failing}"
                " Its deliveries fail at once with endpoint_disabled until it is enabled again: in the"
                f" console, or with POST /api/v1/subscriptions/{name}/enable once it answers again."
            )
        else:
            subject = f"Webhook endpoint disabled: {name}"
            text = (
                f"Herald disabled your webhook endpoint {name}: {failing}"
                " New webhooks to it fail at once with endpoint_disabled."
                " Re-enable it in the console or through the API once it answers again."
            )
        try:
            self._mail.send(tenant_email, subject, text)
        except DependencyError as exc:
            logger.error("could not tell the tenant its endpoint is disabled", extra={"reason": str(exc)})
        count("EndpointDisabled", {})

    def enable(self, breaker: Breaker) -> Breaker | None:
        """The tenant re-enables an endpoint: closed, with a clean record."""
        return self._board.apply(breaker, lambda current: closed(current, self._board.now()))


class EndpointAccount:
    """The tenant's side of its endpoint breakers: list them, disable or re-enable one."""

    def __init__(self, breakers: Breakers, clock: Callable[[], float] = time.time) -> None:
        self._breakers = breakers
        self._clock = clock

    def list(self, tenant_id: str) -> list[Breaker]:
        return self._breakers.endpoints(tenant_id)

    def enable(self, tenant: TenantContext, origin: str) -> Breaker:
        """Closed with a clean record, whatever its state (a closed one is left as it is).
        ``origin``: the endpoint's origin, or its host[:port] alone."""
        return self._turn(tenant, origin, ENABLE)

    def disable(self, tenant: TenantContext, origin: str) -> Breaker:
        """Disabled by hand (a receiver the tenant knows is down or gone): its webhooks fail at once
        with endpoint_disabled, the same gate the automatic disabling uses, until it is enabled."""
        return self._turn(tenant, origin, DISABLE)

    def _turn(self, tenant: TenantContext, origin: str, turn: Turn) -> Breaker:
        known = next((item for item in self.list(tenant.tenant_id) if _names(item, origin)), None)
        if known is None:
            raise HeraldError("No webhook endpoint with this origin.", ErrorCode.ENDPOINT_NOT_FOUND)
        return turn_breaker(self._breakers, tenant, known, turn, self._clock)


# The audit action of a tenant turning a breaker of each kind closed or disabled by hand.
_TURNED = {
    (BreakerKind.ENDPOINT, BreakerState.CLOSED): AuditAction.ENDPOINT_ENABLED,
    (BreakerKind.ENDPOINT, BreakerState.DISABLED): AuditAction.ENDPOINT_DISABLED,
    (BreakerKind.SUBSCRIPTION, BreakerState.CLOSED): AuditAction.SUBSCRIPTION_ENABLED,
    (BreakerKind.SUBSCRIPTION, BreakerState.DISABLED): AuditAction.SUBSCRIPTION_DISABLED,
}
# A turn by hand: the state it ends in, and the change that gets it there.
Turn = tuple[BreakerState, Callable[[Breaker, int], Breaker]]
ENABLE: Turn = (BreakerState.CLOSED, closed)
DISABLE: Turn = (BreakerState.DISABLED, disabled)


def turn_breaker(
    breakers: Breakers,
    tenant: TenantContext,
    known: Breaker,
    turn: Turn,
    clock: Callable[[], float] = time.time,
) -> Breaker:
    """``known`` (an endpoint's or a subscription's breaker) turned by the tenant to ``turn``'s
    state (``ENABLE``, ``DISABLE``), with the caller's audit entry in the same transaction, only
    when the state does change; a concurrent worker's write is read again and built on."""
    target, change = turn
    action = _TURNED[(known.key.kind, target)]
    found = known
    for _ in range(3):
        if found.state is target:
            return found
        now = clock()
        turned = change(found, int(now))
        at = iso(datetime.fromtimestamp(now, UTC))
        audit = entry(tenant.tenant_id, at, tenant.actor, action, known.key.name, previous=found.state.value)
        if breakers.turn(turned, audit):
            return turned
        found = breakers.read([known.key]).get(known.key) or known
    raise HeraldError("It changed meanwhile; try again.", ErrorCode.DEPENDENCY_UNAVAILABLE)


def _names(breaker: Breaker, origin: str) -> bool:
    return origin in (breaker.key.name, breaker.key.name.partition("://")[2])
