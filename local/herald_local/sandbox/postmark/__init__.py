"""Postmark: email and server with the server token, domains with the account token, under
``/postmark``."""
