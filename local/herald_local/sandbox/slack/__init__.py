"""A Slack incoming webhook, the local stack's alert channel, and the alerts it received."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.slack import webhook

SERVICE = Service("slack", (webhook.add_routes,))
