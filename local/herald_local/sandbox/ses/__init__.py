"""Amazon SES v2 SendEmail, the platform's own sender, under ``/ses``."""
