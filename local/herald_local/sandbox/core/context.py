"""What every route of one sandbox instance shares: its store and its slow-answer switch."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from herald_local.sandbox.core.failures import FlakySends
from herald_local.sandbox.core.outages import Outages
from herald_local.sandbox.core.payments import Checkouts
from herald_local.sandbox.core.store import SandboxStore

# Longer than any client timeout Herald uses (15 s for webhooks, 10 s provider reads).
DEFAULT_SLOW_SECONDS = 30.0


@dataclass
class SandboxContext:
    # The email providers' names, which outages take as targets (besides hook names).
    providers: tuple[str, ...]
    store: SandboxStore = field(default_factory=SandboxStore)
    slow_seconds: float = DEFAULT_SLOW_SECONDS
    stopping: threading.Event = field(default_factory=threading.Event)
    # An outage of every imitated provider: each send answers this status until it is lifted.
    outage_status: int | None = None
    # Outages of one provider or one hook name, for a while (see ``outages``).
    outages: Outages = field(default_factory=Outages)
    # The imitated Polar and Paystack checkouts, and where their webhooks go (set by the local stack).
    checkouts: Checkouts = field(default_factory=Checkouts)
    # The sends so far of each recipient that fails at first (``flaky-<n>@…``).
    flaky: FlakySends = field(default_factory=FlakySends)

    def wait_slow(self) -> None:
        """Hold a deliberately slow answer; returns early when the server stops."""
        self.stopping.wait(self.slow_seconds)
