"""Inbound webhooks from email providers and payment processors: one module per sender.

Each module offers ``verify(headers, raw_body, secret, now)``, which raises ``InvalidSignature``
unless the request provably comes from the sender, and ``parse(raw_body, ...)``, which turns the
verified body into Herald's events (``herald.domain.inbound``). Nothing here stores or acts: the
caller verifies first, then parses, then records.
"""
