"""SendGrid v3: mail send, key scopes and domain authentication, under ``/sendgrid``."""
