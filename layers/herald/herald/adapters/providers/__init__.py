"""Email provider adapters: SendGrid, Resend and Postmark with the tenant's keys, Amazon SES for the
platform. Composition roots get them from ``registry.ProviderRegistry``."""
