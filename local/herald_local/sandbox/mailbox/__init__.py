"""What the providers received: the JSON views of messages and attempts, the reset and the HTML
mailbox page."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.mailbox import views

SERVICE = Service("mailbox", (views.add_routes,))
