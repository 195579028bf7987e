"""Resend: emails with idempotency keys and domains, under ``/resend``."""
