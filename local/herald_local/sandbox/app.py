"""The sandbox's Flask application: one blueprint per imitated provider (each under its own path
prefix, since Resend and Postmark both have ``/domains``), the hook receiver and the views."""

from __future__ import annotations

from flask import Flask

from herald_local.sandbox.checkout.routes import checkout_blueprint
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.hooks.receiver import hooks_blueprint
from herald_local.sandbox.mailbox.views import views_blueprint
from herald_local.sandbox.postmark import domains as postmark_domains
from herald_local.sandbox.postmark.send import postmark_blueprint
from herald_local.sandbox.resend import domains as resend_domains
from herald_local.sandbox.resend.send import resend_blueprint
from herald_local.sandbox.sendgrid import domains as sendgrid_domains
from herald_local.sandbox.sendgrid.send import sendgrid_blueprint
from herald_local.sandbox.ses.send import ses_blueprint
from herald_local.sandbox.slack.webhook import slack_blueprint

# Postmark's own limit per message; larger bodies get Werkzeug's 413.
MAX_REQUEST_BYTES = 10 * 1024 * 1024


def create_app(context: SandboxContext) -> Flask:
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    sendgrid = sendgrid_blueprint(context)
    sendgrid_domains.register_domain_routes(sendgrid, context)
    resend = resend_blueprint(context)
    resend_domains.register_domain_routes(resend, context)
    postmark = postmark_blueprint(context)
    postmark_domains.register_domain_routes(postmark, context)
    blueprints = (
        sendgrid,
        resend,
        postmark,
        ses_blueprint(context),
        checkout_blueprint(context),
        hooks_blueprint(context),
        slack_blueprint(context),
        views_blueprint(context),
    )
    for blueprint in blueprints:
        app.register_blueprint(blueprint)
    return app
