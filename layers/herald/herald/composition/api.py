"""Composition root of the API function: its services, built once per container from the settings.

Only what the send path needs is built at cold start; what only some requests need (console
sessions, the day counts, the job queries, the health check, the webhook URL check, the account
routes' service with its vault and provider adapters, the checkout with its processors' credentials)
is built, with its imports, on first use.
"""

from __future__ import annotations

from functools import cached_property, partial
from typing import TYPE_CHECKING

from herald.adapters.queueing import SqsJobQueue
from herald.adapters.store.counter_store import DynamoCounters
from herald.adapters.store.job_store import DynamoJobStore
from herald.adapters.store.key_store import DynamoKeyStore
from herald.adapters.store.schedule_store import DynamoSchedules
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import Foundation, VaultOnFirstUse, foundation, once, provider_registry, vault
from herald.domain.access import Ability
from herald.services.accept import AcceptService
from herald.services.auth import Authenticator, Callers

if TYPE_CHECKING:
    from herald.adapters.health import HealthCheck
    from herald.adapters.store.audit_store import DynamoAuditLog
    from herald.adapters.store.breaker_store import DynamoBreakers
    from herald.domain.notifications import EmailNotification
    from herald.services.account import AccountService
    from herald.services.activity import ActivityService
    from herald.services.attachment_intake import AttachmentIntake
    from herald.services.audit import AuditService
    from herald.services.checkout import CheckoutService
    from herald.services.event_types import EventTypes
    from herald.services.events import EventService
    from herald.services.health import EndpointAccount
    from herald.services.job_queries import JobQueries
    from herald.services.keys import KeyService
    from herald.services.members import MemberService
    from herald.services.portal import PortalService
    from herald.services.sessions import SessionAuthenticator
    from herald.services.subscriptions import Subscriptions
    from herald.services.templates import TemplateService
    from herald.services.unsubscribes import UnsubscribeList


class ApiServices:
    def __init__(self, base: Foundation) -> None:
        settings, table = base.settings, base.table
        self._base = base
        self._tenants = DynamoTenantStore(table)
        self._counters = DynamoCounters(table)
        self._keys = DynamoKeyStore(table)
        self.callers = Callers(Authenticator(self._tenants, self._keys), lambda: self.sessions)
        self._jobs = DynamoJobStore(table, settings.max_attempts)
        self._queue = SqsJobQueue(settings.queue_urls, base.clients.sqs, settings.ordered_queue_urls)
        self._schedules = DynamoSchedules(table)
        self.accept = AcceptService(
            authenticate=partial(self.callers.authenticate, ability=Ability.SEND),
            jobs=self._jobs,
            counters=self._counters,
            queue=self._queue,
            schedules=self._schedules,
            url_guard=self._check_webhook_url,
            secrets=VaultOnFirstUse(),
            attachments=lambda: self.attachments,
            max_attempts=settings.max_attempts,
            render_template=self._render_template,
        )

    def _render_template(self, tenant_id: str, email: EmailNotification) -> EmailNotification:
        # Built on first use: only templated emails render.
        return self.templates.render_email(tenant_id, email)

    def _check_webhook_url(self, url: str) -> object:
        # Imported on first use: only webhook requests carry a URL.
        from herald.adapters.ssrf import check_url

        return check_url(url, local_origin=self._base.settings.local_webhook_origin)

    @cached_property
    def attachments(self) -> AttachmentIntake:
        """Built by the first email with attachments, with the S3 client and the URL fetcher."""
        from herald.adapters.attachment_fetch import fetch_attachment
        from herald.adapters.attachment_store import S3AttachmentStore
        from herald.services.attachment_intake import AttachmentIntake

        settings = self._base.settings
        store = S3AttachmentStore(self._base.clients.s3, settings.attachments_bucket, settings.kms_key_id)
        return AttachmentIntake(store, partial(fetch_attachment, local_origin=settings.local_webhook_origin))

    @cached_property
    def sessions(self) -> SessionAuthenticator:
        """Console sessions, built on the first request without an API key: read with their tenant on
        every request (never cached), like API keys."""
        from herald.adapters.store.signin_store import DynamoSessions
        from herald.services.sessions import SessionAuthenticator

        return SessionAuthenticator(DynamoSessions(self._base.table), self._tenants)

    @cached_property
    def portal(self) -> PortalService:
        """Portal links and sessions, built on first use of a portal route: a session is read with
        its tenant on every request, like a console session."""
        from herald.adapters.store.portal_store import DynamoPortal
        from herald.services.portal import PortalService

        return PortalService(DynamoPortal(self._base.table), self._tenants)

    @cached_property
    def activity(self) -> ActivityService:
        """The day counts, built on first use of a listing or the console's activity."""
        from herald.adapters.store.activity_store import DynamoActivity
        from herald.services.activity import ActivityService

        return ActivityService(DynamoActivity(self._base.table))

    @cached_property
    def jobs(self) -> JobQueries:
        """Built on first use of a job route (reading, listing, retrying, cancelling, recovering)."""
        from herald.services.job_queries import JobQueries

        return JobQueries(
            self._jobs,
            self._queue,
            self.activity,
            schedules=self._schedules,
            counters=self._counters,
            secrets=VaultOnFirstUse(),
            breakers=self._breakers,
            audit=self._audit_log,
            max_attempts=self._base.settings.max_attempts,
        )

    @cached_property
    def unsubscribes(self) -> UnsubscribeList:
        """Built on first use of an unsubscribe route."""
        from herald.adapters.store.unsubscribe_store import DynamoUnsubscribes
        from herald.services.unsubscribes import UnsubscribeList

        return UnsubscribeList(DynamoUnsubscribes(self._base.table))

    @cached_property
    def health(self) -> HealthCheck:
        """Built on first use of the health route."""
        from herald.adapters.health import HealthCheck

        settings = self._base.settings
        return HealthCheck(
            self._base.table, [*settings.queue_urls.values(), settings.dlq_url], self._base.clients.sqs
        )

    @cached_property
    def account(self) -> AccountService:
        """Built on first use of an account route, so the send path's cold start skips the vault."""
        from herald.adapters.providers.ses_tenants import SesTenants
        from herald.adapters.store.account_store import DynamoAccountStore
        from herald.adapters.store.suppression_store import DynamoSuppressions
        from herald.composition.inbound import delivery_format
        from herald.services.account import AccountService

        table = self._base.table
        return AccountService(
            tenants=self._tenants,
            store=DynamoAccountStore(table),
            suppressions=DynamoSuppressions(table),
            counters=self._counters,
            secrets=vault(),
            providers=provider_registry().domain,
            inbound_secrets=lambda provider, secret: delivery_format(provider).check_secret(secret),
            ses_tenants=SesTenants(self._base.clients.sesv2, self._base.settings.platform_sender),
        )

    @cached_property
    def audit(self) -> AuditService:
        """The account's audit log as the tenant reads it (built on first use)."""
        from herald.services.audit import AuditService

        return AuditService(self._audit_log)

    @cached_property
    def _audit_log(self) -> DynamoAuditLog:
        from herald.adapters.store.audit_store import DynamoAuditLog

        return DynamoAuditLog(self._base.table)

    @cached_property
    def keys(self) -> KeyService:
        """The account's named keys (built on first use of a key route)."""
        from herald.services.keys import KeyService

        return KeyService(self._tenants, self._keys)

    @cached_property
    def templates(self) -> TemplateService:
        """The account's email templates and their rendering (built, with the template engine, on
        first use of a template route or a templated send)."""
        from herald.adapters import template_engine
        from herald.adapters.store.template_store import DynamoTemplateStore
        from herald.services.templates import TemplateService

        return TemplateService(DynamoTemplateStore(self._base.table), template_engine)

    @cached_property
    def events(self) -> EventService:
        """Sending events and reading them (built on first use of an event route): the payload is
        checked by the catalog, the fan-out queued on the fan-out queue."""
        from herald.adapters.fanout_queue import SqsFanoutQueue
        from herald.adapters.store.event_store import DynamoEvents
        from herald.services.events import EventService

        return EventService(
            authenticate=partial(self.callers.authenticate, ability=Ability.SEND),
            catalog=lambda: self.event_types,
            events=DynamoEvents(self._base.table),
            counters=self._counters,
            fanout=SqsFanoutQueue(self._base.settings.fanout_queue_url, self._base.clients.sqs),
        )

    @cached_property
    def event_types(self) -> EventTypes:
        """The account's event type catalog and the check of an event's payload against its type
        (built, with jsonschema, on first use of an event type route or an event)."""
        from herald.adapters import event_schemas
        from herald.adapters.store.event_type_store import DynamoEventTypeStore
        from herald.services.event_types import EventTypes

        return EventTypes(DynamoEventTypeStore(self._base.table), event_schemas)

    @cached_property
    def subscriptions(self) -> Subscriptions:
        """The account's subscriptions (built on first use of a subscription or portal route), with
        the webhook sender their test sends go through."""
        from herald import USER_AGENT
        from herald.adapters.store.subscription_store import DynamoSubscriptionStore
        from herald.adapters.webhook_sender import send_webhook
        from herald.services.subscriptions import Subscriptions

        origin = self._base.settings.local_webhook_origin
        return Subscriptions(
            DynamoSubscriptionStore(self._base.table),
            breakers=self._breakers,
            secrets=VaultOnFirstUse(),
            url_guard=self._check_webhook_url,
            sender=partial(send_webhook, local_origin=origin, user_agent=USER_AGENT),
            jobs=self.jobs,
            catalog=lambda: self.event_types,
        )

    @cached_property
    def members(self) -> MemberService:
        """The account's members (built on first use of a member route); invitations go out from
        the platform's own address, as the console's sign-in codes do."""
        from herald.adapters.platform_mail import SesPlatformMail
        from herald.adapters.store.member_store import DynamoMemberStore
        from herald.services.members import MemberService

        base = self._base
        mail = SesPlatformMail(base.clients.sesv2, base.settings.platform_sender)
        return MemberService(self._tenants, DynamoMemberStore(base.table), mail)

    @cached_property
    def endpoints(self) -> EndpointAccount:
        """The tenant's webhook endpoints as the breakers see them (built on first use)."""
        from herald.services.health import EndpointAccount

        return EndpointAccount(self._breakers)

    @cached_property
    def _breakers(self) -> DynamoBreakers:
        """The breakers a waiting webhook's document and the endpoints' routes read (built on first use)."""
        from herald.adapters.store.breaker_store import DynamoBreakers

        return DynamoBreakers(self._base.table)

    @cached_property
    def checkout(self) -> CheckoutService:
        """Built on first use of the checkout route (its processors' credentials are read from SSM then)."""
        from herald.adapters.checkout.processors import PaystackCheckout, PolarCheckout
        from herald.adapters.platform_secrets import SsmSecret
        from herald.domain.inbound import Processor
        from herald.services.checkout import CheckoutService, Seller
        from herald.settings import CheckoutSettings

        settings, ssm = CheckoutSettings.from_env(), self._base.clients.ssm
        polar = PolarCheckout(settings.polar_api_base_url, SsmSecret(settings.polar_token_parameter, ssm))
        paystack = PaystackCheckout(
            settings.paystack_api_base_url, SsmSecret(settings.paystack_secret_parameter, ssm)
        )
        return CheckoutService(
            self._tenants,
            {
                Processor.POLAR: Seller(Processor.POLAR, settings.polar_catalog, polar),
                Processor.PAYSTACK: Seller(Processor.PAYSTACK, settings.paystack_catalog, paystack),
            },
        )


def _api_services() -> ApiServices:
    return ApiServices(foundation())


def api() -> ApiServices:
    return once(_api_services)
