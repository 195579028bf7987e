"""Email provider adapters: one module per vendor of the provider table with the tenant's keys, Amazon SES for the
platform. Composition roots get them from ``registry.ProviderRegistry``."""
