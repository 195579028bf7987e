"""Each email vendor's side of the harness, one module per vendor of the provider table, named by
its slug (``herald_harness.vendors.sendgrid``): test-only credentials, the vendor's signer, its
sample events and signed events of a tenant's job. ``side`` finds the module of a vendor, so what
treats every vendor alike derives from the table."""

from __future__ import annotations

from importlib import import_module
from typing import Protocol, cast

from herald.domain.vendors import ProviderName, vendor_of
from herald_harness.senders import SampleSpec, Sender, SignedRequest


class VendorSide(Protocol):
    # Its signer and verifier, for the tests that attack every sender alike.
    SENDER: Sender
    # The sample events of events/inbound/ made from its payloads.
    SAMPLES: tuple[SampleSpec, ...]
    # What a tenant stores as the vendor's webhookSecret for its events to verify.
    WEBHOOK_SECRET: str

    def delivered(self, *, tenant_id: str, job_id: str, to: str) -> SignedRequest:
        """A signed report, now, that the job's email was delivered."""

    def bounced(self, *, tenant_id: str, job_id: str, to: str) -> SignedRequest:
        """A signed report, now, that the job's email bounced for good (its address suppressed)."""


def side(name: ProviderName) -> VendorSide:
    vendor_of(name)  # SES has no side: it is no tenant's vendor
    return cast(VendorSide, import_module(f"{__name__}.{name.slug}"))
