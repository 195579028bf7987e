"""One mailbox however its address is spelled: the form suppressions are stored and compared on,
and the suppressions themselves (a tenant's recipients mail no longer goes to).

Unicode NFKC first, so compatibility spellings are the characters they stand for (a fullwidth "ｖ"
is a "v"); then the domain in IDNA and lower case (an internationalised domain and its ``xn--``
spelling are one domain) and the local part case-folded. RFC 5321 lets a server treat local parts
as case-sensitive, but mailbox providers do not, and a suppression must not be sidestepped by
spelling. A ``+tag`` is kept: to a sender it is another mailbox. Mail still goes to the address as
the tenant wrote it; only the comparison uses this form.
"""

from __future__ import annotations

import string
import unicodedata

import msgspec

# RFC 5322's atext and the dot: every ASCII character an unquoted local part may hold. Non-ASCII
# letters are left to the full address check, which knows Unicode's rules.
_LOCAL_ASCII = frozenset(string.ascii_letters + string.digits + "!#$%&'*+-/=?^_`{|}~.")


def canonical_address(address: str) -> str:
    local, at, domain = unicodedata.normalize("NFKC", address).rpartition("@")
    if not at:
        return domain.casefold()
    return f"{local.casefold()}@{_canonical_domain(domain)}"


def _canonical_domain(domain: str) -> str:
    lowered = domain.lower().rstrip(".")
    if lowered.isascii():
        return lowered
    import idna  # only internationalised domains pay for loading the IDNA tables

    try:
        return idna.encode(lowered, uts46=True).decode("ascii")
    except idna.IDNAError:
        return lowered  # not a domain any provider sends to; compared as written


def refused_local_characters(address: str) -> list[str]:
    """The ASCII characters before the first @-sign that an unquoted local part cannot hold, each
    once, in code point order; none when the address has no @-sign.

    Herald takes an address bare: no display name, angle brackets or quoted local part. A general
    address parser reads a '"' or a '<' as the start of one of those forms and then reports what
    that form lacks ("must have an @-sign" for an address that has one): checked first, the
    characters themselves can be named."""
    local, at, _ = address.partition("@")
    return sorted({char for char in local if char.isascii() and char not in _LOCAL_ASCII}) if at else []


class Suppression(msgspec.Struct, frozen=True):
    address: str
    reason: str
    created_at: str
    source: str | None = None
