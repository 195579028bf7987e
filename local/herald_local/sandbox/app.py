"""The sandbox's Flask application: every service's blueprint, each imitated API under its own path
prefix (Resend and Postmark both have ``/domains``). A new service is its package and one entry in
``SERVICES``."""

from __future__ import annotations

from flask import Flask

from herald_local.sandbox import (
    checkout,
    hooks,
    mailbox,
    outages,
    paystack,
    polar,
    postmark,
    resend,
    sendgrid,
    ses,
    slack,
)
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.service import Service

SERVICES: tuple[Service, ...] = (
    sendgrid.SERVICE,
    resend.SERVICE,
    postmark.SERVICE,
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

# Postmark's own limit per message; larger bodies get Werkzeug's 413.
MAX_REQUEST_BYTES = 10 * 1024 * 1024


def create_app(context: SandboxContext) -> Flask:
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    for service in SERVICES:
        app.register_blueprint(service.blueprint(context))
    return app
