"""API keys: their format, generation and the hash that is the only thing stored."""

from __future__ import annotations

import hashlib
import re
import secrets

API_KEY_PATTERN = re.compile(r"^hk_[0-9a-f]{64}$")
# The longest grace period a rotated-out key may keep working (7 days).
MAX_GRACE_SECONDS = 604_800


def generate_api_key() -> str:
    return "hk_" + secrets.token_hex(32)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
