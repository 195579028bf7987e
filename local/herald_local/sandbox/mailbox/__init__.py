"""What the sandbox saw: the JSON views, the switches and the HTML mailbox page."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.mailbox import views

SERVICE = Service("mailbox", (views.add_routes,))
