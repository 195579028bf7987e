"""Money as the payment processors count it: whole minor units (kobo, cents) of one currency."""

from __future__ import annotations

import re

import msgspec

# How the template states a price: "500000 NGN" is 5 000.00 naira.
_WRITTEN = re.compile(r"([0-9]+) ([A-Z]{3})")


class Money(msgspec.Struct, frozen=True):
    amount: int  # in the currency's minor units
    currency: str  # ISO 4217 code, upper case

    @classmethod
    def parse(cls, text: str) -> Money:
        """``"<minor units> <ISO 4217 code>"``; ValueError for anything else."""
        written = _WRITTEN.fullmatch(text)
        if written is None:
            raise ValueError(f"{text!r} is not an amount in minor units and a currency code, like 500000 NGN")
        return cls(int(written[1]), written[2])

    def covers(self, price: Money) -> bool:
        """Whether this pays ``price``: its currency, and at least its amount."""
        return self.currency == price.currency and self.amount >= price.amount

    def __str__(self) -> str:
        return f"{self.amount} {self.currency}"
