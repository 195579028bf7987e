"""Resend: emails with idempotency keys and domains, under ``/resend``."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.resend import domains, send

SERVICE = Service(
    send.PROVIDER, (send.add_routes, domains.add_routes), url_prefix="/resend", email_provider=True
)
