"""Polar: checkout creation under ``/polar``, paid on the sandbox's checkout page."""

from herald_local.sandbox.core.service import Service
from herald_local.sandbox.polar import checkouts

SERVICE = Service("polar", (checkouts.add_routes,), url_prefix="/polar")
