"""Composition root of the inbound webhook functions: one email provider's or one payment
processor's receiver per function, built once per container.

Each sender's module is imported only by the function that serves it: an email provider's function
loads its own verifier (an ECDSA one, say), not another's; the payment functions load neither the
vault nor the job store.
"""

from __future__ import annotations

from herald.adapters.platform_secrets import SsmSecret
from herald.adapters.store.inbound_store import DynamoBillingLinks, DynamoInboundLedger, DynamoJobEvents
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.adapters.vendor_modules import load
from herald.composition.common import foundation, once, vault
from herald.domain.inbound import Processor
from herald.domain.vendors import ProviderName, vendor_of
from herald.services.inbound import DeliveryWebhooks, PaymentWebhooks
from herald.services.ports.providers import DeliveryWebhook, PaymentWebhook
from herald.settings import PaymentSettings, WebhookSettings


def delivery_format(provider: ProviderName) -> DeliveryWebhook:
    """The provider's webhook format, from the provider table (its module is imported here, on first use)."""
    webhook: DeliveryWebhook = load(vendor_of(provider).webhook)
    return webhook


def _payment_format(processor: Processor) -> PaymentWebhook:
    if processor is Processor.PAYSTACK:
        from herald.adapters.inbound import paystack

        return paystack.WEBHOOK
    from herald.adapters.inbound import polar

    return polar.WEBHOOK


def _delivery_webhooks(provider: ProviderName) -> DeliveryWebhooks:
    from herald.adapters.store.suppression_store import DynamoSuppressions
    from herald.adapters.store.unsubscribe_store import DynamoUnsubscribes

    table = foundation().table
    return DeliveryWebhooks(
        webhook=delivery_format(provider),
        tenants=DynamoTenantStore(table),
        secrets=vault(),
        events=DynamoJobEvents(table),
        ledger=DynamoInboundLedger(table),
        suppressions=DynamoSuppressions(table),
        unsubscribes=DynamoUnsubscribes(table),
    )


def delivery_webhooks(provider: ProviderName) -> DeliveryWebhooks:
    return once(_delivery_webhooks, provider)


def provider_webhooks() -> DeliveryWebhooks:
    """The webhooks of the provider this function serves (the template names it)."""
    return delivery_webhooks(ProviderName(once(WebhookSettings.from_env).provider))


def _payment_webhooks(processor: Processor) -> PaymentWebhooks:
    from herald.adapters.alert_topic import SnsAlertPublisher

    base = foundation()
    settings = PaymentSettings.from_env(processor)
    return PaymentWebhooks(
        webhook=_payment_format(processor),
        secret=SsmSecret(settings.secret_parameter, base.clients.ssm),
        catalog=settings.catalog,
        tenants=DynamoTenantStore(base.table),
        ledger=DynamoInboundLedger(base.table),
        links=DynamoBillingLinks(base.table),
        alerts=SnsAlertPublisher(base.settings.alert_topic_arn, base.clients.sns),
    )


def payment_webhooks(processor: Processor) -> PaymentWebhooks:
    return once(_payment_webhooks, processor)
