"""PynamoDB models of Herald's single DynamoDB table.

Every entity is a subclass of ``HeraldItem`` told apart by the ``kind`` discriminator, so one
Query of a partition returns a job's state, payload and events, or a tenant's profile, provider
credentials and domains, in one call. Key layout (pk / sk):

    TENANT#<tenantId>          PROFILE                tenant (plan, status, signing secrets)
    TENANT#<tenantId>          PROVIDER#<NAME>        provider credential (sealed key)
    TENANT#<tenantId>          DOMAIN#<domain>        sending domain (per-provider state)
    DOMAIN#<domain>            CLAIM                  which tenant owns a domain (unique)
    APIKEY#<sha256>            KEY                    API key hash -> tenant
    JOB#<tenantId>#<jobId>     STATE                  small, frequently updated job state
    JOB#<tenantId>#<jobId>     PAYLOAD                the accepted request, written once
    IDEM#<tenantId>#<key>      IDEM                   idempotency record (TTL)
    RATE#<tenantId>#<minute>   RATE                   per-minute request counter (TTL)
    USAGE#<tenantId>#<period>  USAGE                  monthly usage counter
    SUPPRESSION#<tenantId>     <address>              suppressed recipient

The job id sits inside the job's partition key next to the tenant id, so a lookup with another
tenant's id cannot find the job: isolation by construction, not by an extra check.
"""

from __future__ import annotations

from typing import Any

from pynamodb.attributes import (
    BooleanAttribute,
    DiscriminatorAttribute,
    JSONAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model


class ByTenantIndex(GlobalSecondaryIndex["HeraldItem"]):
    """gsi1: a tenant's jobs newest first (gsi1sk = createdAt#jobId) and the operator's tenant list."""

    class Meta:
        index_name = "gsi1"
        projection = AllProjection()

    gsi1pk = UnicodeAttribute(hash_key=True)
    gsi1sk = UnicodeAttribute(range_key=True)


class HeraldItem(Model):
    class Meta:
        # Bound to the real table name, region and retry budget by herald.adapters.store.table.bind().
        table_name = "herald-unbound"
        region = "us-east-1"
        host: str | None = None
        max_retry_attempts = 2
        connect_timeout_seconds = 3
        read_timeout_seconds = 5

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    kind = DiscriminatorAttribute()
    gsi1pk = UnicodeAttribute(null=True)
    gsi1sk = UnicodeAttribute(null=True)
    # Epoch seconds; the table's TTL attribute. TTL deletion is lazy, so readers also check times.
    expires_at = NumberAttribute(null=True, attr_name="expiresAt")
    by_tenant = ByTenantIndex()


def tenant_pk(tenant_id: str) -> str:
    return f"TENANT#{tenant_id}"


def job_pk(tenant_id: str, job_id: str) -> str:
    return f"JOB#{tenant_id}#{job_id}"


def jobs_gsi_pk(tenant_id: str) -> str:
    return f"JOBS#{tenant_id}"


# ---------------------------------------------------------------- tenants and keys


class SealedAttribute(MapAttribute[str, Any]):
    """A value sealed by herald.adapters.vault (format version, wrapped data key, nonce, ciphertext)."""

    version = NumberAttribute()
    wrapped_key = UnicodeAttribute(attr_name="wrappedKey")
    nonce = UnicodeAttribute()
    ciphertext = UnicodeAttribute()


class TenantProfile(HeraldItem, discriminator="tenant"):
    tenant_id = UnicodeAttribute(attr_name="tenantId")
    name = UnicodeAttribute()
    email = UnicodeAttribute()
    plan = UnicodeAttribute()
    status = UnicodeAttribute(default="active")
    created_at = UnicodeAttribute(attr_name="createdAt")
    api_key_hash = UnicodeAttribute(attr_name="apiKeyHash")
    signing_secret = SealedAttribute(null=True, attr_name="signingSecret")
    signing_secret_created_at = UnicodeAttribute(null=True, attr_name="signingSecretCreatedAt")
    previous_signing_secret = SealedAttribute(null=True, attr_name="previousSigningSecret")
    previous_valid_until = UnicodeAttribute(null=True, attr_name="previousValidUntil")


class ApiKeyRecord(HeraldItem, discriminator="apikey"):
    tenant_id = UnicodeAttribute(attr_name="tenantId")
    created_at = UnicodeAttribute(attr_name="createdAt")
    # Set when the key was rotated with a grace period: valid until then, refused after.
    valid_until = UnicodeAttribute(null=True, attr_name="validUntil")


class DnsRecordAttribute(MapAttribute[str, Any]):
    type = UnicodeAttribute()
    host = UnicodeAttribute()
    value = UnicodeAttribute()
    purpose = UnicodeAttribute(null=True)
    priority = NumberAttribute(null=True)


class ProviderDomainAttribute(MapAttribute[str, Any]):
    provider = UnicodeAttribute()
    provider_domain_id = UnicodeAttribute(attr_name="providerDomainId")
    verified = BooleanAttribute(default=False)
    records = ListAttribute(of=DnsRecordAttribute, default=list)
    error = UnicodeAttribute(null=True)


class ProviderCredential(HeraldItem, discriminator="provider"):
    provider = UnicodeAttribute()
    priority = NumberAttribute()
    api_key = SealedAttribute(attr_name="apiKey")
    last_four = UnicodeAttribute(attr_name="lastFour")
    account_token = SealedAttribute(null=True, attr_name="accountToken")
    webhook_secret = SealedAttribute(null=True, attr_name="webhookSecret")
    added_at = UnicodeAttribute(attr_name="addedAt")


class SendingDomain(HeraldItem, discriminator="domain"):
    domain = UnicodeAttribute()
    created_at = UnicodeAttribute(attr_name="createdAt")
    providers = ListAttribute(of=ProviderDomainAttribute, default=list)


class DomainClaim(HeraldItem, discriminator="domainclaim"):
    tenant_id = UnicodeAttribute(attr_name="tenantId")


# ---------------------------------------------------------------- jobs


class DeliveryLogAttribute(MapAttribute[str, Any]):
    id = UnicodeAttribute()
    attempt = NumberAttribute()
    status = UnicodeAttribute()
    used_provider = UnicodeAttribute(null=True, attr_name="usedProvider")
    error_message = UnicodeAttribute(null=True, attr_name="errorMessage")
    created_at = UnicodeAttribute(attr_name="createdAt")
    # Every provider tried in this attempt, in order: {provider, outcome, status, error}.
    tried = ListAttribute(of=MapAttribute, default=list)
    response_status = NumberAttribute(null=True, attr_name="responseStatus")
    response_body = UnicodeAttribute(null=True, attr_name="responseBody")


class JobState(HeraldItem, discriminator="job"):
    """The small item every status write touches; the payload lives in JobPayload."""

    job_id = UnicodeAttribute(attr_name="jobId")
    tenant_id = UnicodeAttribute(attr_name="tenantId")
    type = UnicodeAttribute()
    status = UnicodeAttribute()
    priority = NumberAttribute()
    queue = UnicodeAttribute()
    attempts = NumberAttribute(default=0)
    max_attempts = NumberAttribute(attr_name="maxAttempts")
    error_message = UnicodeAttribute(null=True, attr_name="errorMessage")
    created_at = UnicodeAttribute(attr_name="createdAt")
    started_at = UnicodeAttribute(null=True, attr_name="startedAt")
    completed_at = UnicodeAttribute(null=True, attr_name="completedAt")
    used_provider = UnicodeAttribute(null=True, attr_name="usedProvider")
    lease_until = NumberAttribute(null=True, attr_name="leaseUntil")
    # Providers that failed permanently for this job (bad key, suspended): not tried again.
    skip_providers = ListAttribute[str](null=True, attr_name="skipProviders")
    delivery_logs = ListAttribute(of=DeliveryLogAttribute, default=list, attr_name="deliveryLogs")


class JobPayload(HeraldItem, discriminator="payload"):
    payload = JSONAttribute()


class JobEvent(HeraldItem, discriminator="event"):
    type = UnicodeAttribute()
    occurred_at = UnicodeAttribute(attr_name="occurredAt")
    provider = UnicodeAttribute(null=True)


# ---------------------------------------------------------------- counters and guards


class IdempotencyRecord(HeraldItem, discriminator="idem"):
    job_id = UnicodeAttribute(attr_name="jobId")
    body_hash = UnicodeAttribute(attr_name="bodyHash")
    created_at = UnicodeAttribute(attr_name="createdAt")


class RateCounter(HeraldItem, discriminator="rate"):
    # Not named "count": that would shadow Model.count().
    requests = NumberAttribute(default=0, attr_name="count")


class UsageCounter(HeraldItem, discriminator="usage"):
    emails = NumberAttribute(default=0)
    webhooks = NumberAttribute(default=0)
    # emails + webhooks: condition expressions cannot add, and the free plan's quota is shared.
    total = NumberAttribute(default=0)


class Suppression(HeraldItem, discriminator="suppression"):
    address = UnicodeAttribute()
    reason = UnicodeAttribute()
    source = UnicodeAttribute(null=True)
    created_at = UnicodeAttribute(attr_name="createdAt")
