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

import unicodedata

import msgspec


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


class Suppression(msgspec.Struct, frozen=True):
    address: str
    reason: str
    created_at: str
    source: str | None = None
