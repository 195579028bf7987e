"""The provider table: every email provider Herald sends through, each described once, here.

A tenant's vendor (one it brings its own key for) carries its facts on its ``ProviderName`` member:
how people call it, the dotted paths of its sending adapter and of its inbound webhook, the
template parameters of its API's base URLs, what its credentials look like, which DNS records its
sending domains need, and its imitation in the local sandbox. Everything else derives from these
members: request validation and the OpenAPI enum, the provider list the API serves to the console,
the composition roots, the settings, the inbound routes, the local stack, the harness and the
benchmarks; a test holds template.yaml to the table.

Only names, dotted paths and small facts live here (no adapter is imported), so the table costs
every cold start next to nothing; an adapter's module is imported by the first call that needs it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum

import msgspec

# Where each tenant's event webhook of a vendor is served: one function per vendor in template.yaml.
WEBHOOK_ROUTE = "/api/v1/webhooks/{slug}/{{tenantId}}"


class Region(msgspec.Struct, frozen=True):
    """One of a vendor's APIs, by where the tenant's account lives."""

    name: str
    # The template parameter holding the API's base URL (the local stack points it at the sandbox).
    base_url_parameter: str

    @property
    def setting(self) -> str:
        """The environment variable the template sets from that parameter: ``HERALD_<NAME>_BASE_URL``."""
        return "HERALD_" + re.sub(r"(?<!^)(?=[A-Z])", "_", self.base_url_parameter).upper()


class DnsNeed(msgspec.Struct, frozen=True):
    """A kind of DNS record the vendor asks a sending domain for."""

    type: str
    purpose: str


class Vendor(msgspec.Struct, frozen=True, kw_only=True):
    label: str
    # "module:attribute" of the class sending through it (constructed with the base URLs of
    # ``regions``, in their order) and of its inbound webhook's ``DeliveryWebhook``.
    adapter: str
    webhook: str
    # Its APIs; the first is the default, and a tenant whose account lives in another writes that
    # region's name and a colon before the key (``eu:…``).
    regions: tuple[Region, ...]
    # What the vendor calls the key Herald sends with, and what such a key looks like.
    api_key: str
    key_example: str
    # What the optional ``accountToken`` is for, where the vendor has one.
    account_credential: str | None
    # What the tenant stores as ``webhookSecret`` to have the vendor's event webhooks verified.
    inbound_credential: str
    dns: tuple[DnsNeed, ...]
    # The package imitating it in the local sandbox (its SERVICE is named after the slug).
    sandbox: str
    # The largest message it takes, attachments included in their base64 form, in bytes (from the
    # vendor's documentation); the attachments Herald accepts derive from it (``attachments``).
    message_limit: int


class ProviderName(StrEnum):
    """Every provider by the name the API uses. The members with a vendor are the tenants' own;
    SES is the platform's account, for free-plan mail."""

    _value_: str
    vendor: Vendor | None

    def __new__(cls, value: str, vendor: Vendor | None = None) -> ProviderName:
        member = str.__new__(cls, value)
        member._value_ = value
        member.vendor = vendor
        return member

    @property
    def slug(self) -> str:
        """Its name in paths, modules and sandbox routes (``sendgrid``)."""
        return self.value.lower()

    SENDGRID = (
        "SENDGRID",
        Vendor(
            label="SendGrid",
            adapter="herald.adapters.providers.sendgrid:SendGridProvider",
            webhook="herald.adapters.inbound.sendgrid:WEBHOOK",
            regions=(Region("global", "SendgridBaseUrl"),),
            api_key="API key (mail.send; the whitelabel scopes for domains)",
            key_example="SG.…",
            account_credential=None,
            inbound_credential="the Signed Event Webhook's verification key",
            dns=(DnsNeed("CNAME", "return-path"), DnsNeed("CNAME", "dkim")),
            sandbox="herald_local.sandbox.sendgrid",
            # SendGrid: "the total size of your email, including attachments, must be less than 30MB".
            message_limit=30_000_000,
        ),
    )
    RESEND = (
        "RESEND",
        Vendor(
            label="Resend",
            adapter="herald.adapters.providers.resend:ResendProvider",
            webhook="herald.adapters.inbound.resend:WEBHOOK",
            regions=(Region("global", "ResendBaseUrl"),),
            api_key="API key (full access, to manage domains)",
            key_example="re_…",
            account_credential=None,
            inbound_credential="the webhook's signing secret, whsec_…",
            dns=(DnsNeed("MX", "mx"), DnsNeed("TXT", "spf"), DnsNeed("TXT", "dkim")),
            sandbox="herald_local.sandbox.resend",
            # Resend: up to 40 MB per email, after base64 encoding.
            message_limit=40_000_000,
        ),
    )
    POSTMARK = (
        "POSTMARK",
        Vendor(
            label="Postmark",
            adapter="herald.adapters.providers.postmark:PostmarkProvider",
            webhook="herald.adapters.inbound.postmark:WEBHOOK",
            regions=(Region("global", "PostmarkBaseUrl"),),
            api_key="Server token",
            key_example="a UUID",
            account_credential="Account token, to manage sending domains",
            inbound_credential="user:password of the webhook's Basic auth (or the password alone)",
            dns=(DnsNeed("TXT", "dkim"), DnsNeed("CNAME", "return-path")),
            sandbox="herald_local.sandbox.postmark",
            # Postmark: 10 MB per message, attachments included (a larger one is answered 413).
            message_limit=10_000_000,
        ),
    )
    MAILGUN = (
        "MAILGUN",
        Vendor(
            label="Mailgun",
            adapter="herald.adapters.providers.mailgun:MailgunProvider",
            webhook="herald.adapters.inbound.mailgun:WEBHOOK",
            regions=(Region("us", "MailgunBaseUrl"), Region("eu", "MailgunEuBaseUrl")),
            api_key="Private API key",
            key_example="key-… or three groups of hex digits",
            account_credential=None,
            inbound_credential="the HTTP webhook signing key (not the API key)",
            dns=(
                DnsNeed("TXT", "spf"),
                DnsNeed("TXT", "dkim"),
                DnsNeed("CNAME", "tracking"),
                DnsNeed("MX", "receiving"),
            ),
            sandbox="herald_local.sandbox.mailgun",
            # Mailgun: 25 MB per message.
            message_limit=25_000_000,
        ),
    )
    SES = "SES"


# SES v2 (the platform's account): 40 MB per message, attachments included, after base64 encoding.
SES_MESSAGE_LIMIT = 40_000_000


def message_limit(name: ProviderName) -> int:
    """The largest message ``name`` takes, in bytes."""
    return SES_MESSAGE_LIMIT if name.vendor is None else name.vendor.message_limit


def provider_label(name: ProviderName) -> str:
    """How people call a provider: ``Postmark``, ``Amazon SES``."""
    return "Amazon SES" if name.vendor is None else name.vendor.label


def vendor_of(name: ProviderName) -> Vendor:
    """The facts of a tenant's vendor; SES is none."""
    if name.vendor is None:
        raise ValueError(f"{name.value} is not a provider tenants bring keys for")
    return name.vendor


# Free-plan mail goes through the platform's own account, in this order.
PLATFORM_PROVIDERS: tuple[ProviderName, ...] = (ProviderName.SES,)

# The providers a tenant brings its own key for, in the table's order.
TENANT_PROVIDERS: tuple[ProviderName, ...] = tuple(name for name in ProviderName if name.vendor is not None)

# Every API of every vendor, with its vendor: the base URLs the settings read and the local stack sets.
VENDOR_REGIONS: tuple[tuple[ProviderName, Region], ...] = tuple(
    (name, region) for name in TENANT_PROVIDERS for region in vendor_of(name).regions
)


def tenant_provider_names(spell: Callable[[str], str] = str) -> str:
    """The tenants' providers as a sentence names them: ``SENDGRID, RESEND or POSTMARK`` (each
    name spelled by ``spell``)."""
    *first, last = (spell(name.value) for name in TENANT_PROVIDERS)
    return f"{', '.join(first)} or {last}" if first else last


def webhook_route(name: ProviderName) -> str:
    """The route of a vendor's event webhook, as template.yaml writes it."""
    return WEBHOOK_ROUTE.format(slug=name.slug)
