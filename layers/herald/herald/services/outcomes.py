"""What a store answers besides its result: the outcomes of reads and conditional writes that the
services act on. Their own module, apart from the ports' protocols (only named in signatures), so
that a cold start loads these classes without the protocols."""

from __future__ import annotations


class DuplicateRequest(Exception):
    """A job with this idempotency key exists already; ``same_body`` tells 409 from 422."""

    def __init__(self, job_id: str, same_body: bool) -> None:
        super().__init__("duplicate request")
        self.job_id = job_id
        self.same_body = same_body


class RateLimited(Exception):
    pass


class QuotaExhausted(Exception):
    def __init__(self, used: int) -> None:
        super().__init__("quota exhausted")
        self.used = used


class TenantNotFound(Exception):
    pass


class ProfileChanged(Exception):
    """A conditional profile update found the fields it expected changed meanwhile."""


class KeyChanged(Exception):
    """The tenant's current key changed under a concurrent rotation."""


class TemplateChanged(Exception):
    """A template changed (a new version, a publication, its deletion) under a concurrent change."""


class EventTypeChanged(Exception):
    """An event type was created or changed under a concurrent change (or its name is taken)."""


class SubscriptionChanged(Exception):
    """A subscription changed (an edit, a rotation, its deletion) under a concurrent change."""


class SubscriptionLimit(Exception):
    """The tenant has as many subscriptions as it may have."""


class DomainTaken(Exception):
    """Another tenant already registered this domain."""


class AlreadyExists(Exception):
    pass


class MemberChanged(Exception):
    """A member's transaction found what it was read with changed meanwhile: the member (or the
    owner the change left in place) was changed or removed, or the address was invited already."""
