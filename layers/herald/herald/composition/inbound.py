"""Composition root of the inbound webhook functions: one email provider's or one payment
processor's receiver per function, built once per container.

Each sender's verifier module is imported only by the function that serves it: the SendGrid
function loads the ECDSA verifier, not Polar's; the payment functions load neither the vault nor
the job store.
"""

from __future__ import annotations

import importlib
from functools import cache

from herald.adapters.inbound.formats import DeliveryWebhook, PaymentWebhook
from herald.adapters.platform_secrets import SsmSecret
from herald.adapters.store.inbound_store import DynamoBillingLinks, DynamoInboundLedger, DynamoJobEvents
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import foundation
from herald.domain.billing import PlanCatalog
from herald.domain.inbound import Processor
from herald.domain.providers import ProviderName
from herald.services.inbound import DeliveryWebhooks, PaymentWebhooks
from herald.settings import PaymentSettings

_MODULES = {
    ProviderName.SENDGRID: "herald.adapters.inbound.sendgrid",
    ProviderName.RESEND: "herald.adapters.inbound.resend",
    ProviderName.POSTMARK: "herald.adapters.inbound.postmark",
    Processor.PAYSTACK: "herald.adapters.inbound.paystack",
    Processor.POLAR: "herald.adapters.inbound.polar",
}


def delivery_format(provider: ProviderName) -> DeliveryWebhook:
    """The provider's webhook format (its module is imported here, on first use)."""
    webhook: DeliveryWebhook = importlib.import_module(_MODULES[provider]).WEBHOOK
    return webhook


def _payment_format(processor: Processor) -> PaymentWebhook:
    webhook: PaymentWebhook = importlib.import_module(_MODULES[processor]).WEBHOOK
    return webhook


@cache
def delivery_webhooks(provider: ProviderName) -> DeliveryWebhooks:
    from herald.adapters.store.suppression_store import DynamoSuppressions
    from herald.composition.vault import process_vault

    foundation()
    return DeliveryWebhooks(
        webhook=delivery_format(provider),
        tenants=DynamoTenantStore(),
        secrets=process_vault(),
        events=DynamoJobEvents(),
        ledger=DynamoInboundLedger(),
        suppressions=DynamoSuppressions(),
    )


@cache
def payment_webhooks(processor: Processor) -> PaymentWebhooks:
    base = foundation()
    settings = PaymentSettings.from_env(processor)
    return PaymentWebhooks(
        webhook=_payment_format(processor),
        secret=SsmSecret(settings.secret_parameter, base.clients.ssm),
        catalog=PlanCatalog.of(settings.indie_plan_key, settings.startup_plan_key),
        tenants=DynamoTenantStore(),
        ledger=DynamoInboundLedger(),
        links=DynamoBillingLinks(),
    )
