"""Mailgun: messages with the private API key (HTTP Basic auth, user ``api``) and domains, under
``/mailgun``; the local stack points both of Mailgun's regions at it."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.mailgun import domains, send

SERVICE = Service(
    send.PROVIDER, (send.add_routes, domains.add_routes), url_prefix="/mailgun", email_provider=True
)
