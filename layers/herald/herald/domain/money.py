"""Money as the payment processors count it: whole minor units (kobo, cents) of one currency."""

from __future__ import annotations

import msgspec


class Money(msgspec.Struct, frozen=True):
    amount: int  # in the currency's minor units
    currency: str  # ISO 4217 code, upper case

    def __str__(self) -> str:
        return f"{self.amount} {self.currency}"
