"""The checkout page that stands in for every payment processor's own, and the list of checkouts."""

from herald_local.sandbox.checkout import page
from herald_local.sandbox.core.service import Service

SERVICE = Service("checkout", (page.add_routes,))
