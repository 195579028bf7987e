"""The payment processors' checkouts (Polar, Paystack) and the page that pays them."""

from herald_local.sandbox.checkout import routes
from herald_local.sandbox.core.service import Service

SERVICE = Service("checkout", (routes.add_routes,))
