"""SnapStart: the functions on the request path (the API and the workers) resume from a snapshot of
their initialised environment, taken when a version is published, instead of importing anew.

What is in the snapshot is shared by every environment restored from it, so it must hold nothing
that is secret, connected, or drawn at random: the hooks empty the process registry before the
snapshot (no data key, client or connection is built yet, and none gets into it) and again after
each restore (whatever an invocation built before is built anew), and re-seed ``random`` after each
restore (the retry jitter's sequence would otherwise repeat in every restored copy). Ids, keys and
nonces come from ``os.urandom`` (``uuid4``, ``secrets``), which draws fresh after a restore anyway.
"""

from __future__ import annotations

import os
import random

from herald import INITIALIZATION_TYPE
from herald.composition import common

# Lambda's value of INITIALIZATION_TYPE while it initialises an environment for a snapshot.
SNAP_START = "snap-start"


def register() -> None:
    """Register the hooks when Lambda initialises this environment for a snapshot (a function with
    SnapStart off, or the local stack, registers nothing and imports nothing for it)."""
    if os.environ.get(INITIALIZATION_TYPE) != SNAP_START:
        return
    # The runtime's own module (python3.12 and later): present where SnapStart runs.
    from snapshot_restore_py import register_after_restore, register_before_snapshot

    register_before_snapshot(before_snapshot)
    register_after_restore(after_restore)


def before_snapshot() -> None:
    common.reset()


def after_restore() -> None:
    random.seed()
    common.reset()
