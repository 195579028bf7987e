"""What every handler module calls last, once its import is done."""

from __future__ import annotations

import gc

from herald.composition import snapstart


def finish() -> None:
    """Resume the collector that ``herald`` paused for the import, with what the import made frozen
    (moved out of every later collection's walk: modules, classes and functions live as long as the
    process, and after a SnapStart restore a walk would fault every page of them in); then register
    SnapStart's hooks where Lambda initialises for a snapshot."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
    snapstart.register()
