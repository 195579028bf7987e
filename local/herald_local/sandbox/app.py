"""The sandbox's Flask application: every service's blueprint, each imitated API under its own path
prefix (two providers may both have ``/domains``). The email vendors' imitations are the packages the
provider table names (``herald.domain.vendors``); any other service is its package and one entry in
``SERVICES``."""

from __future__ import annotations

from importlib import import_module

from flask import Flask

from herald.domain.vendors import TENANT_PROVIDERS, vendor_of
from herald_local.sandbox import checkout, hooks, mailbox, outages, paystack, polar, ses, slack
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.service import Service

SERVICES: tuple[Service, ...] = (
    *(import_module(vendor_of(name).sandbox).SERVICE for name in TENANT_PROVIDERS),
    ses.SERVICE,
    polar.SERVICE,
    paystack.SERVICE,
    checkout.SERVICE,
    hooks.SERVICE,
    slack.SERVICE,
    outages.SERVICE,
    mailbox.SERVICE,
)
# The email providers, in the order the outage switches and the sandbox's banner list them.
PROVIDERS = tuple(service.name for service in SERVICES if service.email_provider)

# The largest message any imitated provider takes (10 MB); larger bodies get Werkzeug's 413.
MAX_REQUEST_BYTES = 10 * 1024 * 1024


def create_app(context: SandboxContext) -> Flask:
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    for service in SERVICES:
        app.register_blueprint(service.blueprint(context))
    return app
