"""Amazon SES v2 SendEmail, the platform's own sender, under ``/ses``."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.ses import send

SERVICE = Service(send.PROVIDER, (send.add_routes,), url_prefix="/ses", email_provider=True)
