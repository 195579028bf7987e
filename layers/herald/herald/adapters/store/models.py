"""PynamoDB models of Herald's single DynamoDB table and its key layout: every builder and parser
of a key lives here too.

    pk                          sk                   item
    TENANT#<tenantId>           PROFILE              tenant (plan, status, limits, signing secrets)
    TENANT#<tenantId>           PROVIDER#<NAME>      provider credential (sealed key)
    TENANT#<tenantId>           DOMAIN#<domain>      sending domain (per-provider state)
    TENANT#<tenantId>           BREAKER#<NAME>       circuit breaker of the tenant's provider key
    TENANT#<tenantId>           KEY#<keyId>          a named API key (hash, scopes, domains, last use)
    TENANT#<tenantId>           MEMBER#<memberId>    a member or a pending invitation (role)
    PERSON#<sha256 of address>  TENANT#<tenantId>    an account an address is a member of
    AUDIT#<tenantId>            <at>#<entryId>       an audit entry (TTL: the audit retention)
    TEMPLATES#<tenantId>        <templateId>         an email template's head (name, latest and published version)
    TEMPLATE#<tenantId>#<tplId> V#<version, 6 digits> one kept version of the template (subject, html, text)
    TEMPLATE#<tenantId>#<tplId> PUBLISHED            a copy of the published version: a send reads it in one GetItem
    PLATFORM                    BREAKER#<NAME>       circuit breaker of a platform provider
    ENDPOINTS#<tenantId>        <origin>             circuit breaker of a webhook endpoint
    EVENTTYPES#<tenantId>       <name>               an event type (description, current schema, version, state)
    EVENTTYPE#<tenantId>#<name> V#<version, 6 digits> one kept schema version of the event type
    SUBSCRIPTIONS#<tenantId>    <subId>              a subscription (url, event types, channels, sealed secrets)
    SUBSCRIPTIONS#<tenantId>    <subId>#BREAKER      the subscription's circuit breaker (sorts beside it)
    SUBSCRIPTIONS#<tenantId>    #COUNT               how many subscriptions the tenant has (the cap's guard)
    EVENT#<tenantId>#<eventId>  EVENT                an event as sent (its payload once, its fan-out pages)
    RATE#<tenantId>#<subId>     SLOT                 the next free send slot of a rate-limited subscription
    DOMAIN#<domain>             CLAIM                which tenant owns a domain (unique)
    APIKEY#<sha256>             KEY                  API key hash -> tenant and key id
    EMAIL#<sha256 of address>   CLAIM                the tenant that signs in to the console with it
    SIGNIN#<sha256 of address>  CODE                 the address's pending one-time code (TTL)
    SESSION#<sha256 of token>   SESSION              a console session (TTL)
    PORTAL#<sha256 of token>    LINK                 a portal link not yet opened: tenant, subscriber (TTL)
    PORTAL#<sha256 of token>    SESSION              a portal session: tenant, subscriber (TTL)
    THROTTLE#<scope>#<window>   THROTTLE             code requests of an address or client IP (TTL)
    JOB#<tenantId>#<jobId>      JOB                  the accepted request and its routing, written once
    JOB#<tenantId>#<jobId>      STATUS               small delivery state, from the first claim on
    JOB#<tenantId>#<jobId>      EVENT#<prov>#<id>    a delivery event reported by the provider (once)
    USAGE#<tenantId>            PERIOD#<period>      the tenant's counters: jobs this period (and by day), requests this minute
    USAGE#<tenantId>            DAY#<YYYY-MM-DD>     outcomes of the jobs accepted that day (completed, failed)
    SUPPRESSION#<tenantId>      <address>            suppressed recipient
    UNSUBSCRIBE#<tenantId>      <topic>#<address>    a recipient's unsubscribe from a topic (* = every topic)
    INBOUND#<source>#<...>#<id> SEEN                 an inbound event already handled (dedupe)
    BILLING#<processor>#<ref>   LINK                 a processor's customer or subscription -> tenant
    ALERTS#<windowStart>        ALERTS               job alerts sent in a ten-minute window (rate limit)
    SWEEPER                     LAST                 when the sweeper's last complete run was

Indexes: gsi1 lists a tenant's jobs newest first (JOBS#<tenantId>, createdAt#jobId), the
operator's tenants (TENANTS, createdAt#tenantId) and the tenants active lately (ACTIVE#<hour>,
tenantId: a counter item's entry, moved once an hour by the accept path's counter write); gsi2 lists
a tenant's failed and cancelled jobs (JOBS#<tenantId>#failed|cancelled, createdAt#jobId) and the
tenants by when the quota reset next has something to do for them (RESETS, due#tenantId);
completed jobs, most of them, have no entry of their own (it would cost a write unit per delivery)
and are listed from gsi1 and their status items; gsi3 holds the scheduled jobs not yet dispatched
by due time (DUE#<shard>, sendAt#jobId), an entry that exists only while a job waits; gsi4 finds a
tenant's jobs by recipient or webhook URL host (FIND#<tenantId>#<term>, sorted by gsi1sk), an
entry written once with the request item. The job id sits inside the job's partition key
next to the tenant id, so a lookup with another tenant's id cannot find the job: isolation by
construction, not by an extra check.

Every entity is a subclass of ``HeraldItem`` told apart by the ``kind`` discriminator, so one Query of
a partition returns a job's request, state and events, or a tenant's profile, provider credentials
and domains, in one call. These classes never leave the store package: the stores translate them to
and from the frozen values of ``herald.domain``.

Write units are billed per started KB of the whole item, also by an update that changes one
attribute, and every write of an item rewrites its index entries whose projected attributes change.
So the frequently updated job state (``JobStatusItem``) is a small item of its own, apart from the
request (``JobItem``), and the indexes project only what listing needs.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from datetime import date, datetime
from typing import Any

from pynamodb.attributes import (
    Attribute,
    BinaryAttribute,
    BooleanAttribute,
    DiscriminatorAttribute,
    JSONAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
)
from pynamodb.constants import BINARY
from pynamodb.indexes import GlobalSecondaryIndex, IncludeProjection
from pynamodb.models import Model

PROFILE_SK = "PROFILE"
KEY_SK = "KEY"
CLAIM_SK = "CLAIM"
JOB_SK = "JOB"
STATUS_SK = "STATUS"
SEEN_SK = "SEEN"
LINK_SK = "LINK"
ALERTS_SK = "ALERTS"
# The sweeper's mark: when its last complete run was.
SWEEPER_PK = "SWEEPER"
SWEEPER_SK = "LAST"
TENANTS_GSI_PK = "TENANTS"
RESETS_GSI_PK = "RESETS"
_EVENT_PREFIX = "EVENT#"
# createdAt (ISO-8601 ms, UTC) # job id: what a list cursor may point at.
_JOB_SORT_KEY = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[0-9a-f-]{36}$")


def tenant_pk(tenant_id: str) -> str:
    return f"TENANT#{tenant_id}"


def tenant_id_of(pk: str) -> str:
    """The tenant id of a tenant partition key."""
    return pk.removeprefix("TENANT#")


def provider_sk(provider: str) -> str:
    return f"PROVIDER#{provider}"


def domain_sk(domain: str) -> str:
    return f"DOMAIN#{domain}"


PLATFORM_PK = "PLATFORM"
BREAKER_SK_PREFIX = "BREAKER#"


def provider_breaker_sk(provider: str) -> str:
    return f"{BREAKER_SK_PREFIX}{provider}"


def endpoints_pk(tenant_id: str) -> str:
    """A tenant's endpoint breakers in a partition of their own: the tenant's partition, read by
    every request's authentication, stays small however many origins it calls."""
    return f"ENDPOINTS#{tenant_id}"


def event_types_pk(tenant_id: str) -> str:
    return f"EVENTTYPES#{tenant_id}"


def event_type_versions_pk(tenant_id: str, name: str) -> str:
    return f"EVENTTYPE#{tenant_id}#{name}"


def subscriptions_pk(tenant_id: str) -> str:
    """A tenant's subscriptions and their breakers, each breaker sorted right after its subscription,
    so a fan-out page (a range of ids) reads both in one Query."""
    return f"SUBSCRIPTIONS#{tenant_id}"


SUBSCRIPTION_BREAKER_SUFFIX = "#BREAKER"
# Sorts before every subscription id ("sub_…"): a fan-out page's range never holds it.
SUBSCRIPTION_COUNT_SK = "#COUNT"


def subscription_breaker_sk(subscription_id: str) -> str:
    return f"{subscription_id}{SUBSCRIPTION_BREAKER_SUFFIX}"


EVENT_SK = "EVENT"


def event_pk(tenant_id: str, event_id: str) -> str:
    """Like a job's, an event's key holds its tenant: another tenant's id cannot find it."""
    return f"EVENT#{tenant_id}#{event_id}"


def events_gsi_pk(tenant_id: str) -> str:
    """gsi1: a tenant's events newest first (gsi1sk = createdAt#eventId)."""
    return f"EVENTS#{tenant_id}"


RATE_SK = "SLOT"


def rate_pk(tenant_id: str, subscription_id: str) -> str:
    return f"RATE#{tenant_id}#{subscription_id}"


def domain_claim_pk(domain: str) -> str:
    return f"DOMAIN#{domain}"


def api_key_pk(key_hash: str) -> str:
    return f"APIKEY#{key_hash}"


def named_key_sk(key_id: str) -> str:
    return f"KEY#{key_id}"


def member_sk(member_id: str) -> str:
    return f"MEMBER#{member_id}"


def person_pk(address_key: str) -> str:
    return f"PERSON#{address_key}"


def audit_pk(tenant_id: str) -> str:
    return f"AUDIT#{tenant_id}"


def audit_sk(at: str, entry_id: str) -> str:
    return f"{at}#{entry_id}"


CODE_SK = "CODE"
SESSION_SK = "SESSION"
THROTTLE_SK = "THROTTLE"


def templates_pk(tenant_id: str) -> str:
    """A tenant's template heads, apart from their versions: the listing reads heads only."""
    return f"TEMPLATES#{tenant_id}"


def template_pk(tenant_id: str, template_id: str) -> str:
    return f"TEMPLATE#{tenant_id}#{template_id}"


TEMPLATE_PUBLISHED_SK = "PUBLISHED"
TEMPLATE_VERSION_PREFIX = "V#"


def template_version_sk(version: int) -> str:
    return f"{TEMPLATE_VERSION_PREFIX}{version:06d}"


# An event type's kept schema versions sort as a template's do (V#000001, V#000002, ...).
event_type_version_sk = template_version_sk


def email_claim_pk(address_key: str) -> str:
    return f"EMAIL#{address_key}"


def signin_pk(address_key: str) -> str:
    return f"SIGNIN#{address_key}"


def session_pk(token_digest: str) -> str:
    return f"SESSION#{token_digest}"


def portal_pk(token_digest: str) -> str:
    """A portal link's or a portal session's partition (each token has its own; the sort key says
    which it is: ``LINK_SK`` or ``SESSION_SK``)."""
    return f"PORTAL#{token_digest}"


def throttle_pk(scope: str, window: int) -> str:
    return f"THROTTLE#{scope}#{window}"


def job_pk(tenant_id: str, job_id: str) -> str:
    return f"JOB#{tenant_id}#{job_id}"


def job_ids(pk: str) -> tuple[str, str]:
    """(tenant id, job id) of a job partition key."""
    _, tenant_id, job_id = pk.split("#", 2)
    return tenant_id, job_id


def attempt_sk(log_id: str) -> str:
    return f"ATTEMPT#{log_id}"


def event_sk(provider: str, event_id: str) -> str:
    """Named by the provider's id of the report, so a redelivered report finds its own item."""
    return f"{_EVENT_PREFIX}{provider}#{event_id}"


def usage_pk(tenant_id: str) -> str:
    """One partition per tenant holds all its counters, so a range of days is one Query."""
    return f"USAGE#{tenant_id}"


def tenant_id_of_usage(pk: str) -> str:
    return pk.removeprefix("USAGE#")


PERIOD_SK_PREFIX = "PERIOD#"
DAY_SK_PREFIX = "DAY#"


def period_sk(period: str) -> str:
    return f"{PERIOD_SK_PREFIX}{period}"


def day_sk(day: date) -> str:
    return f"{DAY_SK_PREFIX}{day.isoformat()}"


def alerts_pk(window_start: str) -> str:
    return f"ALERTS#{window_start}"


def suppression_pk(tenant_id: str) -> str:
    return f"SUPPRESSION#{tenant_id}"


def unsubscribe_pk(tenant_id: str) -> str:
    return f"UNSUBSCRIBE#{tenant_id}"


def unsubscribe_sk(topic: str, canonical: str) -> str:
    """Topic first: a topic's unsubscribes are one range of the partition (topics hold no '#')."""
    return f"{topic}#{canonical}"


def inbound_pk(key: str) -> str:
    return f"INBOUND#{key}"


def billing_link_pk(processor: str, ref: str) -> str:
    return f"BILLING#{processor}#{ref}"


def jobs_gsi_pk(tenant_id: str) -> str:
    return f"JOBS#{tenant_id}"


def ended_jobs_gsi_pk(tenant_id: str, status: str) -> str:
    """A tenant's failed or cancelled jobs (``status``)."""
    return f"JOBS#{tenant_id}#{status}"


def find_gsi_pk(tenant_id: str, term: str) -> str:
    """A tenant's jobs to one lowercased recipient or webhook URL host."""
    return f"FIND#{tenant_id}#{term}"


def active_gsi_pk(hour: str) -> str:
    """The gsi1 partition of the counter items of the tenants whose last accepted job came in that
    hour (``YYYYMMDDHH``, UTC): the sweeper's list of who may have recent jobs."""
    return f"ACTIVE#{hour}"


def active_hour(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H")


def job_sort_key(created_at: str, job_id: str) -> str:
    return f"{created_at}#{job_id}"


def due_gsi_pk(job_id: str, shards: int) -> str:
    """The due-time partition of a job: spread by its id, so no one partition takes every write."""
    return f"DUE#{zlib.crc32(job_id.encode()) % shards}"


def due_gsi_pks(shards: int) -> list[str]:
    return [f"DUE#{shard}" for shard in range(shards)]


def due_sort_key(send_at: str, job_id: str) -> str:
    return f"{send_at}#{job_id}"


def tenant_sort_key(created_at: str, tenant_id: str) -> str:
    return f"{created_at}#{tenant_id}"


def reset_sort_key(due: str, tenant_id: str) -> str:
    return f"{due}#{tenant_id}"


def encode_cursor(sort_key: str) -> str:
    return base64.urlsafe_b64encode(sort_key.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The sort key a cursor points at; ValueError for anything this store did not hand out."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        sort_key = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError) as exc:
        raise ValueError("not a cursor") from exc
    if not _JOB_SORT_KEY.match(sort_key):
        raise ValueError("not a cursor")
    return sort_key


# What gsi1 and gsi2 carry besides the keys; the template's projections say the same.
JOBS_INDEX_ATTRIBUTES = [
    "kind",
    "type",
    "priority",
    "maxAttempts",
    "createdAt",
    "target",
    "subject",
]
ENDED_INDEX_ATTRIBUTES = [
    "kind",
    "type",
    "status",
    "priority",
    "attempts",
    "maxAttempts",
    "errorMessage",
    "createdAt",
    "startedAt",
    "completedAt",
]
# What gsi4 (finding jobs by recipient or host) carries: what the job list shows of a request
# (its keys, gsi4pk and gsi1sk, come with every entry).
FIND_INDEX_ATTRIBUTES = ["kind", "type", "priority", "maxAttempts", "target", "subject"]
# What gsi3 (the scheduled jobs by due time) carries besides the keys: what the dispatcher queues.
DUE_INDEX_ATTRIBUTES = ["kind", "type", "priority", "createdAt", "orderingKey"]


class ByTenantIndex(GlobalSecondaryIndex["HeraldItem"]):
    """gsi1: a tenant's jobs newest first (gsi1sk = createdAt#jobId) and the operator's tenant list."""

    class Meta:
        index_name = "gsi1"
        projection = IncludeProjection(JOBS_INDEX_ATTRIBUTES)

    gsi1pk = UnicodeAttribute(hash_key=True)
    gsi1sk = UnicodeAttribute(range_key=True)


class EndedJobsIndex(GlobalSecondaryIndex["HeraldItem"]):
    """gsi2: a tenant's failed and cancelled jobs, newest first (an entry is written once, when the
    job ends so), and the tenants by when the quota reset next has something to do for them."""

    class Meta:
        index_name = "gsi2"
        projection = IncludeProjection(ENDED_INDEX_ATTRIBUTES)

    gsi2pk = UnicodeAttribute(hash_key=True)
    gsi2sk = UnicodeAttribute(range_key=True)


class DueJobsIndex(GlobalSecondaryIndex["HeraldItem"]):
    """gsi3: the scheduled jobs waiting for their time, by due time (gsi3sk = sendAt#jobId); an entry
    exists from acceptance to dispatch or cancel, so the index holds only what is due some day."""

    class Meta:
        index_name = "gsi3"
        projection = IncludeProjection(DUE_INDEX_ATTRIBUTES)

    gsi3pk = UnicodeAttribute(hash_key=True)
    gsi3sk = UnicodeAttribute(range_key=True)


class FindIndex(GlobalSecondaryIndex["HeraldItem"]):
    """gsi4: a tenant's jobs to one recipient or webhook URL host, newest first by gsi1's sort key
    (createdAt#jobId, which the job item holds once); written once with the request item."""

    class Meta:
        index_name = "gsi4"
        projection = IncludeProjection(FIND_INDEX_ATTRIBUTES)

    gsi4pk = UnicodeAttribute(hash_key=True)
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
    gsi2pk = UnicodeAttribute(null=True)
    gsi2sk = UnicodeAttribute(null=True)
    gsi3pk = UnicodeAttribute(null=True)
    gsi3sk = UnicodeAttribute(null=True)
    gsi4pk = UnicodeAttribute(null=True)
    # Epoch seconds; the table's TTL attribute. TTL deletion is lazy, so readers also check times.
    expires_at = NumberAttribute(null=True, attr_name="expiresAt")
    by_tenant = ByTenantIndex()
    ended = EndedJobsIndex()
    due = DueJobsIndex()
    find = FindIndex()


# ---------------------------------------------------------------- tenants and keys


class DeflatedJSONAttribute(Attribute[Any]):
    """A JSON document stored as compact, deflated UTF-8. A request's text (HTML mail, JSON events)
    shrinks to about half, so a 1 KB request fits its item in one write unit, and DynamoDB bills
    binary values by their raw length."""

    attr_type = BINARY

    def serialize(self, value: Any) -> bytes:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
        # Raw deflate: DynamoDB checks the item's integrity, a zlib header and checksum would be
        # six bytes paid on every job.
        compressor = zlib.compressobj(level=9, wbits=-zlib.MAX_WBITS)
        return compressor.compress(text) + compressor.flush()

    def deserialize(self, value: bytes) -> Any:
        return json.loads(zlib.decompress(value, wbits=-zlib.MAX_WBITS))


class SealedAttribute(MapAttribute[str, Any]):
    """A value sealed by the vault (format version, wrapped data key, nonce, ciphertext)."""

    version = NumberAttribute()
    wrapped_key = UnicodeAttribute(attr_name="wrappedKey")
    nonce = UnicodeAttribute()
    ciphertext = UnicodeAttribute()


class TenantItem(HeraldItem, discriminator="tenant"):
    tenant_id = UnicodeAttribute(attr_name="tenantId")
    name = UnicodeAttribute()
    email = UnicodeAttribute()
    plan = UnicodeAttribute()
    status = UnicodeAttribute(default="active")
    created_at = UnicodeAttribute(attr_name="createdAt")
    # The account's one key before named keys, and its earlier keys in grace (hash -> valid until):
    # read only by ``herald migrate keys``, which makes them named keys and removes them.
    api_key_hash = UnicodeAttribute(null=True, attr_name="apiKeyHash")
    period_anchor = UnicodeAttribute(null=True, attr_name="periodAnchor")
    signing_secret = SealedAttribute(null=True, attr_name="signingSecret")
    signing_secret_created_at = UnicodeAttribute(null=True, attr_name="signingSecretCreatedAt")
    previous_signing_secret = SealedAttribute(null=True, attr_name="previousSigningSecret")
    previous_valid_until = UnicodeAttribute(null=True, attr_name="previousValidUntil")
    rate_limit = NumberAttribute(null=True, attr_name="rateLimit")
    quota_limit = NumberAttribute(null=True, attr_name="quotaLimit")
    paid_until = UnicodeAttribute(null=True, attr_name="paidUntil")
    period_end = UnicodeAttribute(null=True, attr_name="periodEnd")
    billing_status = UnicodeAttribute(null=True, attr_name="billingStatus")
    subscription = UnicodeAttribute(null=True)
    grace_keys = MapAttribute[str, Any](null=True, attr_name="graceKeys")
    sessions_valid_from = UnicodeAttribute(null=True, attr_name="sessionsValidFrom")


class EmailClaimItem(HeraldItem, discriminator="emailclaim"):
    """Which tenant signs in to the console with an address (keyed by the address's hash)."""

    tenant_id = UnicodeAttribute(attr_name="tenantId")


class SignInCodeItem(HeraldItem, discriminator="signincode"):
    """An address's last one-time code: its salted hash, tries, what it opens, and when it was sent
    as which code of a streak (TTL: the streak's end, after the code's own expiry)."""

    digest = UnicodeAttribute()
    salt = UnicodeAttribute()
    issued_at = NumberAttribute(default=0, attr_name="issuedAt")
    sends = NumberAttribute(default=1)
    tries = NumberAttribute(default=0)
    name = UnicodeAttribute(null=True)
    tenant_id = UnicodeAttribute(null=True, attr_name="tenantId")


class SessionItem(HeraldItem, discriminator="session"):
    """A console session, keyed by its token's hash (TTL: its expiry)."""

    tenant_id = UnicodeAttribute(attr_name="tenantId")
    created_at = UnicodeAttribute(attr_name="createdAt")
    member_id = UnicodeAttribute(null=True, attr_name="memberId")


class PortalLinkItem(HeraldItem, discriminator="portallink"):
    """A portal link not yet opened, keyed by its token's hash (TTL: its expiry); opening it deletes
    it, on the condition that it is still there."""

    tenant_id = UnicodeAttribute(attr_name="tenantId")
    created_at = UnicodeAttribute(attr_name="createdAt")
    subscriber_id = UnicodeAttribute(null=True, attr_name="subscriberId")


class PortalSessionItem(HeraldItem, discriminator="portalsession"):
    """A portal session, keyed by its token's hash (TTL: its expiry)."""

    tenant_id = UnicodeAttribute(attr_name="tenantId")
    created_at = UnicodeAttribute(attr_name="createdAt")
    subscriber_id = UnicodeAttribute(null=True, attr_name="subscriberId")


class ThrottleItem(HeraldItem, discriminator="throttle"):
    """Code requests or verifications of one client IP in one window (TTL: the window's end)."""

    requests = NumberAttribute(default=0)


class ApiKeyItem(HeraldItem, discriminator="apikey"):
    """Which tenant and named key a key hash is (never changes: revoking deletes it)."""

    tenant_id = UnicodeAttribute(attr_name="tenantId")
    created_at = UnicodeAttribute(attr_name="createdAt")
    # Absent on keys stored before named keys (``herald migrate keys`` adds it).
    key_id = UnicodeAttribute(null=True, attr_name="keyId")


class NamedKeyItem(HeraldItem, discriminator="namedkey"):
    """A named API key in its tenant's partition: what it may do, and its hashes."""

    key_id = UnicodeAttribute(attr_name="keyId")
    name = UnicodeAttribute()
    scopes = ListAttribute[str]()
    domains = ListAttribute[str](null=True)
    key_hash = UnicodeAttribute(attr_name="keyHash")
    last_four = UnicodeAttribute(attr_name="lastFour")
    created_at = UnicodeAttribute(attr_name="createdAt")
    created_by = UnicodeAttribute(attr_name="createdBy")
    valid_until = UnicodeAttribute(null=True, attr_name="validUntil")
    last_used_at = UnicodeAttribute(null=True, attr_name="lastUsedAt")
    # Hashes of earlier secrets still in a rotation's grace period -> valid until.
    previous = MapAttribute[str, Any](null=True)


class MemberItem(HeraldItem, discriminator="member"):
    member_id = UnicodeAttribute(attr_name="memberId")
    email = UnicodeAttribute()
    role = UnicodeAttribute()
    status = UnicodeAttribute()
    created_at = UnicodeAttribute(attr_name="createdAt")
    invited_by = UnicodeAttribute(attr_name="invitedBy")
    joined_at = UnicodeAttribute(null=True, attr_name="joinedAt")
    sessions_valid_from = UnicodeAttribute(null=True, attr_name="sessionsValidFrom")


class MembershipItem(HeraldItem, discriminator="membership"):
    """One account an address belongs to (the member item in the tenant's partition is the truth;
    this lets sign-in list a person's accounts without scanning)."""

    tenant_id = UnicodeAttribute(attr_name="tenantId")
    member_id = UnicodeAttribute(attr_name="memberId")
    tenant_name = UnicodeAttribute(attr_name="tenantName")
    # Copies of the member's, written in the member's own transactions: the person's list of
    # accounts and the choice of the account a sign-in opens read this partition alone.
    role = UnicodeAttribute(null=True)
    status = UnicodeAttribute(null=True)
    created_at = UnicodeAttribute(null=True, attr_name="createdAt")
    joined_at = UnicodeAttribute(null=True, attr_name="joinedAt")


class AuditItem(HeraldItem, discriminator="audit"):
    at = UnicodeAttribute()
    entry_id = UnicodeAttribute(attr_name="entryId")
    action = UnicodeAttribute()
    target = UnicodeAttribute()
    actor_kind = UnicodeAttribute(attr_name="actorKind")
    actor_id = UnicodeAttribute(attr_name="actorId")
    actor_name = UnicodeAttribute(attr_name="actorName")
    ip = UnicodeAttribute(null=True)
    details = MapAttribute[str, Any](null=True)


class TemplateItem(HeraldItem, discriminator="template"):
    """A template's head: changed by every new version and publication, so it holds no content."""

    template_id = UnicodeAttribute(attr_name="templateId")
    name = UnicodeAttribute()
    latest_version = NumberAttribute(attr_name="latestVersion")
    published_version = NumberAttribute(null=True, attr_name="publishedVersion")
    published_at = UnicodeAttribute(null=True, attr_name="publishedAt")
    created_at = UnicodeAttribute(attr_name="createdAt")
    updated_at = UnicodeAttribute(attr_name="updatedAt")


class TemplateVersionItem(HeraldItem, discriminator="templateversion"):
    """A version's content, deflated like a job's request (written once; the published copy is
    rewritten by each publication)."""

    version = NumberAttribute()
    content = DeflatedJSONAttribute()
    created_at = UnicodeAttribute(attr_name="createdAt")
    created_by = UnicodeAttribute(attr_name="createdBy")


class DnsRecordAttribute(MapAttribute[str, Any]):
    type = UnicodeAttribute()
    host = UnicodeAttribute()
    value = UnicodeAttribute()
    purpose = UnicodeAttribute(null=True)
    priority = NumberAttribute(null=True)
    status = UnicodeAttribute(null=True)


class ProviderDomainAttribute(MapAttribute[str, Any]):
    provider = UnicodeAttribute()
    provider_domain_id = UnicodeAttribute(attr_name="providerDomainId")
    verified = BooleanAttribute(default=False)
    records = ListAttribute(of=DnsRecordAttribute, default=list)
    error = UnicodeAttribute(null=True)


class ProviderItem(HeraldItem, discriminator="provider"):
    provider = UnicodeAttribute()
    priority = NumberAttribute()
    api_key = SealedAttribute(attr_name="apiKey")
    last_four = UnicodeAttribute(attr_name="lastFour")
    account_token = SealedAttribute(null=True, attr_name="accountToken")
    webhook_secret = SealedAttribute(null=True, attr_name="webhookSecret")
    added_at = UnicodeAttribute(attr_name="addedAt")


class DomainItem(HeraldItem, discriminator="domain"):
    domain = UnicodeAttribute()
    created_at = UnicodeAttribute(attr_name="createdAt")
    providers = ListAttribute(of=ProviderDomainAttribute, default=list)


class DomainClaimItem(HeraldItem, discriminator="domainclaim"):
    tenant_id = UnicodeAttribute(attr_name="tenantId")


# ---------------------------------------------------------------- jobs


class JobItem(HeraldItem, discriminator="job"):
    """The accepted request, written once by the API (a conditional put: the idempotency guard)."""

    type = UnicodeAttribute()
    priority = NumberAttribute()
    max_attempts = NumberAttribute(attr_name="maxAttempts")
    request = DeflatedJSONAttribute()
    # What tells a retry under the same idempotency key from another request: the first half of
    # the request's SHA-256, raw (a collision would need 2^64 requests under one key).
    body_digest = BinaryAttribute(null=True, legacy_encoding=False, attr_name="bodyDigest")
    # What the job list shows of an email (herald.domain.search.Listed): its recipient as sent and
    # its subject cut short, projected into gsi1 and gsi4 so a listing reads no request. A webhook
    # keeps no copy of its URL: a 1 KB webhook's item would pass 1 KB and cost a second write unit
    # on every accept; a listing reads the URLs of the webhooks it shows instead.
    target = UnicodeAttribute(null=True)
    subject = UnicodeAttribute(null=True)

    @property
    def created_at(self) -> str:
        """The acceptance time, which leads the listing key (stored once, there)."""
        return str(self.gsi1sk).split("#", 1)[0]


class DeliveryLogAttribute(MapAttribute[str, Any]):
    id = UnicodeAttribute()
    attempt = NumberAttribute()
    status = UnicodeAttribute()
    used_provider = UnicodeAttribute(null=True, attr_name="usedProvider")
    error_message = UnicodeAttribute(null=True, attr_name="errorMessage")
    created_at = UnicodeAttribute(attr_name="createdAt")
    # Every provider tried in this attempt, in order: {provider, outcome, status, error, latencyMs}.
    tried = ListAttribute(of=MapAttribute, default=list)
    response_status = NumberAttribute(null=True, attr_name="responseStatus")
    latency_ms = NumberAttribute(null=True, attr_name="latencyMs")
    # The last attempt's WebhookExchange, compact JSON: only the write that ends the job keeps it
    # here, since nothing rewrites the status item after it (a retried attempt's has an item).
    exchange = UnicodeAttribute(null=True)
    # Stored only when false (a failure no retry changes).
    retryable = BooleanAttribute(null=True)


class JobAttemptItem(HeraldItem, discriminator="attempt"):
    """A retried webhook attempt's WebhookExchange (compact JSON), written once beside the status
    item: there, up to 4 KB of answer would be rewritten by every later claim and outcome."""

    exchange = UnicodeAttribute()


class JobStatusItem(HeraldItem, discriminator="status"):
    """The small item every delivery write touches; it exists from the first claim (or failed enqueue),
    or, for a scheduled job, from its acceptance."""

    type = UnicodeAttribute()
    status = UnicodeAttribute()
    priority = NumberAttribute()
    created_at = UnicodeAttribute(attr_name="createdAt")
    attempts = NumberAttribute(default=0)
    max_attempts = NumberAttribute(attr_name="maxAttempts")
    error_message = UnicodeAttribute(null=True, attr_name="errorMessage")
    started_at = UnicodeAttribute(null=True, attr_name="startedAt")
    completed_at = UnicodeAttribute(null=True, attr_name="completedAt")
    used_provider = UnicodeAttribute(null=True, attr_name="usedProvider")
    lease_until = NumberAttribute(null=True, attr_name="leaseUntil")
    skip_providers = ListAttribute[str](null=True, attr_name="skipProviders")
    delivery_logs = ListAttribute(of=DeliveryLogAttribute, null=True, attr_name="deliveryLogs")
    # Set by a retry, a redrive and the sweeper (which also counts its own re-queues).
    requeued_at = UnicodeAttribute(null=True, attr_name="requeuedAt")
    sweeps = NumberAttribute(null=True)
    # Scheduled jobs: when to send (the status item exists from acceptance on, status scheduled).
    send_at = UnicodeAttribute(null=True, attr_name="sendAt")
    ordering_key = UnicodeAttribute(null=True, attr_name="orderingKey")


class BreakerItem(HeraldItem, discriminator="breaker"):
    """A provider's or an endpoint's circuit breaker: written on failures and state changes only."""

    state = UnicodeAttribute()
    name = UnicodeAttribute()
    # [[slot start, failures, successes], ...] of the failure-rate window (provider breakers).
    slots = JSONAttribute(null=True)
    consecutive = NumberAttribute(default=0)
    opened_at = NumberAttribute(null=True, attr_name="openedAt")
    open_until = NumberAttribute(null=True, attr_name="openUntil")
    cooldown_seconds = NumberAttribute(default=0, attr_name="cooldownSeconds")
    probe_until = NumberAttribute(null=True, attr_name="probeUntil")
    last_error = UnicodeAttribute(null=True, attr_name="lastError")
    since = NumberAttribute(null=True)
    version = NumberAttribute()


class EventTypeItem(HeraldItem, discriminator="eventtype"):
    """An event type's head: its current schema (compact JSON) and state."""

    description = UnicodeAttribute(null=True)
    schema = UnicodeAttribute(null=True)
    version = NumberAttribute()
    deprecated = BooleanAttribute(default=False)
    archived = BooleanAttribute(default=False)
    created_at = UnicodeAttribute(attr_name="createdAt")
    updated_at = UnicodeAttribute(attr_name="updatedAt")


class SubscriptionItem(HeraldItem, discriminator="subscription"):
    """A registered endpoint: what it receives, how fast, and its sealed secrets and headers."""

    url = UnicodeAttribute()
    event_types = ListAttribute[str](attr_name="eventTypes")
    channels = ListAttribute[str](null=True)
    description = UnicodeAttribute(null=True)
    rate_limit = NumberAttribute(null=True, attr_name="rateLimitPerSecond")
    secret = SealedAttribute()
    previous_secret = SealedAttribute(null=True, attr_name="previousSecret")
    previous_valid_until = UnicodeAttribute(null=True, attr_name="previousValidUntil")
    header_names = ListAttribute[str](null=True, attr_name="headerNames")
    headers = SealedAttribute(null=True)
    subscriber_id = UnicodeAttribute(null=True, attr_name="subscriberId")
    created_at = UnicodeAttribute(attr_name="createdAt")
    updated_at = UnicodeAttribute(attr_name="updatedAt")
    version = NumberAttribute()
    # When its last test send went out (epoch seconds): tests are spaced (TEST_INTERVAL_SECONDS).
    last_test_at = NumberAttribute(null=True, attr_name="lastTestAt")


class SubscriptionCountItem(HeraldItem, discriminator="subscriptioncount"):
    """The tenant's number of subscriptions, changed in each creation's and deletion's transaction:
    the cap is a condition on it, not a count of the partition."""

    total = NumberAttribute(default=0)


class EventItem(HeraldItem, discriminator="fanout"):
    """An event as the tenant sent it, written once at acceptance (a conditional put: the
    idempotency guard); the payload is stored here once, each delivery job carries its own copy."""

    type = UnicodeAttribute()
    payload = DeflatedJSONAttribute()
    channels = ListAttribute[str](null=True)
    subscriptions = NumberAttribute()
    page_ends = ListAttribute[str](null=True, attr_name="pageEnds")
    body_digest = BinaryAttribute(null=True, legacy_encoding=False, attr_name="bodyDigest")

    @property
    def created_at(self) -> str:
        return str(self.gsi1sk).split("#", 1)[0]


class RateSlotItem(HeraldItem, discriminator="rate"):
    """A rate-limited subscription's next free send slot (epoch milliseconds), kept a minute."""

    next_at = NumberAttribute(attr_name="nextAt")


class JobEventItem(HeraldItem, discriminator="event"):
    """One delivery event of a job, written once (its key is the provider's id of the report) and
    kept as long as the job."""

    type = UnicodeAttribute()
    occurred_at = UnicodeAttribute(attr_name="occurredAt")
    provider = UnicodeAttribute(null=True)
    reason = UnicodeAttribute(null=True)
    received_at = UnicodeAttribute(null=True, attr_name="receivedAt")


# ---------------------------------------------------------------- counters and suppressions


class CounterItem(HeraldItem, discriminator="usage"):
    """A tenant's jobs in one billing period, and its requests in the current minute. Each day's
    accepted jobs are attributes of their own (``ae1130``), which no class attribute names
    (``herald.adapters.store.activity_store`` reads them)."""

    emails = NumberAttribute(default=0)
    webhooks = NumberAttribute(default=0)
    # emails + webhooks: condition expressions cannot add, and the free plan's quota is shared.
    total = NumberAttribute(default=0)
    minute = UnicodeAttribute(null=True)
    # Not named "count": that would shadow Model.count().
    requests = NumberAttribute(default=0)


class DayCountItem(HeraldItem, discriminator="days"):
    """The outcomes of one day's jobs of a tenant (``herald.adapters.store.activity_store``)."""

    completed_email = NumberAttribute(null=True)
    completed_webhook = NumberAttribute(null=True)
    failed_email = NumberAttribute(null=True)
    failed_webhook = NumberAttribute(null=True)


class InboundMarkItem(HeraldItem, discriminator="inbound"):
    """An inbound event already handled: a redelivery of it is acknowledged and ignored."""


class BillingLinkItem(HeraldItem, discriminator="billinglink"):
    """Which tenant a payment processor's customer or subscription belongs to (Paystack reports most
    subscription events without the tenant id Herald's checkout gave the first charge)."""

    tenant_id = UnicodeAttribute(attr_name="tenantId")


class SweepMarkItem(HeraldItem, discriminator="sweep"):
    """When the sweeper's last complete run was: the next run reads what aged since."""

    swept_at = UnicodeAttribute(attr_name="sweptAt")


class AlertCounterItem(HeraldItem, discriminator="alerts"):
    """Job alerts counted in one window, by every container together."""

    sent = NumberAttribute(default=0)


class SuppressionItem(HeraldItem, discriminator="suppression"):
    address = UnicodeAttribute()
    reason = UnicodeAttribute()
    source = UnicodeAttribute(null=True)
    created_at = UnicodeAttribute(attr_name="createdAt")


class UnsubscribeItem(HeraldItem, discriminator="unsubscribe"):
    address = UnicodeAttribute()
    topic = UnicodeAttribute()
    source = UnicodeAttribute()
    provider = UnicodeAttribute(null=True)
    created_at = UnicodeAttribute(attr_name="createdAt")
