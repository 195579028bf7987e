"""What the provider table names by dotted path, imported when first asked for: a vendor's sending
adapter or its inbound webhook, so a function imports only the vendors it serves."""

from __future__ import annotations

from importlib import import_module
from typing import Any


def load(path: str) -> Any:
    """The attribute a ``module:attribute`` path names, its module imported now."""
    module, _, attribute = path.partition(":")
    return getattr(import_module(module), attribute)
