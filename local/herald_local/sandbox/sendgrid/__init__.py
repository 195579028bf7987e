"""SendGrid v3: mail send, key scopes and domain authentication, under ``/sendgrid``."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.sendgrid import domains, send

SERVICE = Service(
    send.PROVIDER, (send.add_routes, domains.add_routes), url_prefix="/sendgrid", email_provider=True
)
