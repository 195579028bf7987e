"""The ports of the services: what they need from storage, queues, key management, providers and the
network, as small protocols over domain values, one module per concern (a job's storage and queues,
tenants and their accounts, providers and inbound webhooks, the platform's own services). Adapters
implement them; composition roots wire them; tests substitute in-memory fakes."""
