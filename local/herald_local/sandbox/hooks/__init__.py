"""The receiver of Herald's outbound webhooks, with their signature checks and the list of what arrived."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.hooks import receiver

SERVICE = Service("hooks", (receiver.add_routes,))
