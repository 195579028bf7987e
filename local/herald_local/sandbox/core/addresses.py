"""Email addresses as the imitated providers read them."""

from __future__ import annotations

import re
from email.utils import parseaddr

# Loose on purpose: the providers reject obvious garbage, not every RFC 5322 corner.
_ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")


def bare_address(address: str) -> str:
    """``Name <a@b>`` → ``a@b``; what is not an address comes back stripped."""
    return parseaddr(address)[1] or address.strip()


def is_address(address: str) -> bool:
    """A bare address such as ``a@b.example``."""
    return bool(_ADDRESS.match(address))


def is_named_address(address: str) -> bool:
    """``a@b.example`` or ``Name <a@b.example>`` (the ``from`` format some providers take)."""
    return is_address(address.strip()) or (
        address.strip().endswith(">") and is_address(bare_address(address))
    )
