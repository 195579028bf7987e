"""A local imitation of the email providers' APIs plus an outbound-webhook receiver, for tests and
the Docker-free local stack.

One package per service it imitates or offers (each email vendor of the provider table, ``ses``,
``slack``, ``polar``, ``paystack``, ``checkout``, ``hooks``, ``outages``, ``mailbox``), each standing
only on the shared ``core`` and exposing one ``SERVICE`` (``core.service``) that ``app`` mounts.

- ``/<vendor>`` (``/sendgrid`` …): each email vendor's API under its own prefix (these are the
  providers' base URLs); keys and tokens that begin with ``sandbox-`` are valid. Each vendor's
  package documents which error bodies each status gets. ``/ses`` is the platform's own sender;
  ``/polar`` and ``/paystack`` are the payment processors' checkout APIs, paid on
  ``/_sandbox/checkout/<id>`` (see ``checkout``). ``/ses`` also imitates SES tenants, which moto
  lacks; ``POST /ses/_sandbox/tenants/<name>/trip`` pauses one (see ``ses.tenants``).
- Recipients choose failures (``fail-<status>[-<provider>]@…``, ``timeout[-<provider>]@…``; see
  ``core.failures``); domains whose first label starts with ``pending`` never verify.
- ``/hooks/<name>`` receives outbound webhooks and checks their signatures (see ``hooks``).
- ``/slack/<path>`` is a Slack incoming webhook, the local stack's alert channel (see ``slack``).
- ``PUT /_sandbox/outage {"status": 503}`` makes every provider answer that status to every send
  until ``DELETE /_sandbox/outage``: an outage, and the recovery after it.
- ``PUT /_sandbox/outages/<provider|hook:name> {"status": 500, "seconds": 300}``
  (or ``{"timeout": true}``): one target fails for a while (see ``core.outages``).
- ``/_sandbox/messages``, ``/_sandbox/attempts``, ``/_sandbox/hooks``, ``/_sandbox/slack`` (JSON,
  filterable; DELETE to clear), ``DELETE /_sandbox`` (reset everything), ``/`` (the HTML mailbox).
"""

from herald_local.sandbox.core.payments import PaymentTargets
from herald_local.sandbox.server import SandboxServer

__all__ = ["PaymentTargets", "SandboxServer"]
