"""The key layout of Herald's single table, in one place. Every builder and parser of a key lives here.

    pk                          sk                   item
    TENANT#<tenantId>           PROFILE              tenant (plan, status, limits, signing secrets)
    TENANT#<tenantId>           PROVIDER#<NAME>      provider credential (sealed key)
    TENANT#<tenantId>           DOMAIN#<domain>      sending domain (per-provider state)
    TENANT#<tenantId>           BREAKER#<NAME>       circuit breaker of the tenant's provider key
    PLATFORM                    BREAKER#<NAME>       circuit breaker of a platform provider
    ENDPOINTS#<tenantId>        <origin>             circuit breaker of a webhook endpoint
    DOMAIN#<domain>             CLAIM                which tenant owns a domain (unique)
    APIKEY#<sha256>             KEY                  API key hash -> tenant
    EMAIL#<sha256 of address>   CLAIM                the tenant that signs in to the console with it
    SIGNIN#<sha256 of address>  CODE                 the address's pending one-time code (TTL)
    SESSION#<sha256 of token>   SESSION              a console session (TTL)
    THROTTLE#<scope>#<window>   THROTTLE             code requests of an address or client IP (TTL)
    JOB#<tenantId>#<jobId>      JOB                  the accepted request and its routing, written once
    JOB#<tenantId>#<jobId>      STATUS               small delivery state, from the first claim on
    JOB#<tenantId>#<jobId>      EVENT#<prov>#<id>    a delivery event reported by the provider (once)
    USAGE#<tenantId>            PERIOD#<period>      the tenant's counters: jobs this period (and by day), requests this minute
    USAGE#<tenantId>            DAY#<YYYY-MM-DD>     outcomes of the jobs accepted that day (completed, failed)
    SUPPRESSION#<tenantId>      <address>            suppressed recipient
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
by due time (DUE#<shard>, sendAt#jobId), an entry that exists only while a job waits. The job id sits inside the job's partition key
next to the tenant id, so a lookup with another tenant's id cannot find the job: isolation by
construction, not by an extra check.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from datetime import date, datetime

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


def domain_claim_pk(domain: str) -> str:
    return f"DOMAIN#{domain}"


def api_key_pk(key_hash: str) -> str:
    return f"APIKEY#{key_hash}"


CODE_SK = "CODE"
SESSION_SK = "SESSION"
THROTTLE_SK = "THROTTLE"


def email_claim_pk(address_key: str) -> str:
    return f"EMAIL#{address_key}"


def signin_pk(address_key: str) -> str:
    return f"SIGNIN#{address_key}"


def session_pk(token_digest: str) -> str:
    return f"SESSION#{token_digest}"


def throttle_pk(scope: str, window: int) -> str:
    return f"THROTTLE#{scope}#{window}"


def job_pk(tenant_id: str, job_id: str) -> str:
    return f"JOB#{tenant_id}#{job_id}"


def job_ids(pk: str) -> tuple[str, str]:
    """(tenant id, job id) of a job partition key."""
    _, tenant_id, job_id = pk.split("#", 2)
    return tenant_id, job_id


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


def inbound_pk(key: str) -> str:
    return f"INBOUND#{key}"


def billing_link_pk(processor: str, ref: str) -> str:
    return f"BILLING#{processor}#{ref}"


def jobs_gsi_pk(tenant_id: str) -> str:
    return f"JOBS#{tenant_id}"


def ended_jobs_gsi_pk(tenant_id: str, status: str) -> str:
    """A tenant's failed or cancelled jobs (``status``)."""
    return f"JOBS#{tenant_id}#{status}"


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
