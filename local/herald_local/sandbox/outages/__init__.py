"""The switches that stage outages: of every provider, or of one provider or hook name for a while."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.outages import switches

SERVICE = Service("outages", (switches.add_routes,))
