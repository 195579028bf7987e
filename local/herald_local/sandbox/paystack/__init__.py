"""Paystack: plans and transaction initialize under ``/paystack``, paid on the sandbox's checkout
page."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.paystack import checkouts

SERVICE = Service("paystack", (checkouts.add_routes,), url_prefix="/paystack")
