"""Postmark: email and server with the server token, domains with the account token, under
``/postmark``."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.postmark import domains, send

SERVICE = Service(
    send.PROVIDER, (send.add_routes, domains.add_routes), url_prefix="/postmark", email_provider=True
)
