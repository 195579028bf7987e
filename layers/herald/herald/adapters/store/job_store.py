"""Data access for jobs on the API side: the accept write, reads, listing and the retry transitions.

DynamoDB calls per operation (measured by the benchmark):
- insert: 1 conditional PutItem of the request item (its id derives from the idempotency key, so the
  put is the idempotency guard); a duplicate adds 1 consistent GetItem to tell 409 from 422;
- get: 1 Query (request, status and events share a partition);
- list: 1 Query of an index page + 1 BatchGetItem of the page's status items; failed jobs are
  served by gsi2 directly (+ 1 BatchGetItem of their request items: what the list shows); completed
  ones read the newest jobs' status items until the page is full; in-flight statuses (pending,
  processing) scan the newest jobs within a budget. ``pagination.total`` comes from the day counters
  (``activity_store``), except for in-flight statuses, whose scan counts them. A page with webhooks
  adds 1 BatchGetItem of their request items (no index holds a webhook's URL);
- search: Queries of gsi4 (a recipient or host), gsi2 or gsi1 within [since, until), at most the
  page's entries, or ``SEARCH_SCAN_BUDGET`` more when a filter may drop some, each joined as list
  joins them (1 BatchGetItem per 100 entries);
- enqueue failure / retry: 1 conditional UpdateItem of the status item;
- owner (the operator's lookup by job id alone): 1 BatchGetItem of request keys per 100 tenants.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from typing import Any, cast

import msgspec
from msgspec.structs import replace
from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition

from herald.adapters.store.conversions import fingerprint, request_document
from herald.adapters.store.job_items import state_of, target_of, view_of
from herald.adapters.store.models import (
    JOB_SK,
    STATUS_SK,
    HeraldItem,
    JobItem,
    JobStatusItem,
    decode_cursor,
    encode_cursor,
    ended_jobs_gsi_pk,
    find_gsi_pk,
    job_ids,
    job_pk,
    job_sort_key,
    jobs_gsi_pk,
)
from herald.adapters.store.table import ConditionFailed, Table, conditional, translated
from herald.domain.errors import DependencyError
from herald.domain.job_records import JobMessage, JobPage, JobState, JobView, NewJob
from herald.domain.jobs import Channel, JobStatus
from herald.domain.notifications import DeliveryRef, NotificationRequest, WebhookNotification
from herald.domain.search import JobSearch, Listed
from herald.services.outcomes import DuplicateRequest

# In-flight filters read status items of the newest jobs; this many at most per request.
IN_FLIGHT_SCAN_BUDGET = 1000
_BATCH_GET = 100
# A fan-out page's conditional puts run side by side (each waits on its own round trip).
_PARALLEL_PUTS = 16
# Index entries a search reads per call beyond its page when a filter (type, status, subject) may
# drop entries: its reads stay bounded whatever the history, and its cursor goes on from there.
SEARCH_SCAN_BUDGET = 200
# Entries read per request when a type filter drops some: enough that a rare type does not cost a
# round trip per entry.
_FILTERED_PAGE = 100


class DynamoJobStore:
    def __init__(self, table: Table, max_attempts: int) -> None:
        self._table = table
        # A status item created by a failed enqueue starts with the accept path's attempt budget.
        self._max_attempts = max_attempts

    def insert(self, job: NewJob) -> None:
        digest = _digest(job.keyed_request)
        try:
            with conditional("job table write"):
                self._job_item(job, digest).save(condition=JobItem.pk.does_not_exist())
        except ConditionFailed as exc:
            raise self._duplicate(job, digest) from exc

    def insert_deliveries(self, jobs: Sequence[NewJob]) -> list[str]:
        """Write an event's delivery jobs, each only if it does not exist yet (their ids derive from
        the event and the subscription): one conditional PutItem each, side by side. The ids to
        queue: the jobs written now, and those written before that no worker has claimed yet (a
        fan-out page run again after a crash between its writes and its messages; a second message
        of such a job is dropped by the worker's claim)."""
        if not jobs:
            return []
        with ThreadPoolExecutor(max_workers=min(_PARALLEL_PUTS, len(jobs))) as pool:
            written = list(pool.map(self._put_new, jobs))
        existing = [job for job, new in zip(jobs, written, strict=True) if not new]
        claimed = self._claimed(existing)
        return [job.job_id for job in jobs if job.job_id not in claimed]

    def _put_new(self, job: NewJob) -> bool:
        try:
            with conditional("job table write"):
                self._job_item(job, None).save(condition=JobItem.pk.does_not_exist())
        except ConditionFailed:
            return False
        return True

    def _claimed(self, jobs: Sequence[NewJob]) -> set[str]:
        """The ids among ``jobs`` that have a status item (a worker claimed them, or they failed)."""
        keys = [(job_pk(job.tenant_id, job.job_id), STATUS_SK) for job in jobs]
        found: set[str] = set()
        for start in range(0, len(keys), _BATCH_GET):
            with translated("job table read"):
                items = self._table[JobStatusItem].batch_get(
                    keys[start : start + _BATCH_GET], consistent_read=True
                )
                found.update(job_ids(item.pk)[1] for item in items)
        return found

    def _job_item(self, job: NewJob, digest: bytes | None) -> JobItem:
        """The request item. An event's delivery has no listing entry (gsi1: the job list shows what
        clients sent, and each entry costs a write unit): it is found by its subscription (gsi4)."""
        listed = Listed.of(job.request.notification)
        delivery = _delivery_of(job.request)
        return self._table[JobItem](
            job_pk(job.tenant_id, job.job_id),
            JOB_SK,
            type=job.request.channel.value,
            priority=job.priority,
            max_attempts=job.max_attempts,
            request=request_document(job.request),
            body_digest=digest,
            expires_at=job.expires_at,
            target=listed.target if job.request.channel is Channel.EMAIL else None,
            subject=listed.subject,
            gsi1pk=None if delivery else jobs_gsi_pk(job.tenant_id),
            gsi1sk=job_sort_key(job.created_at, job.job_id),
            gsi4pk=find_gsi_pk(job.tenant_id, listed.term),
        )

    def _duplicate(self, job: NewJob, digest: bytes | None) -> Exception:
        if digest is None:
            return DependencyError("job table write failed: job id collision")
        with translated("job table read"):
            try:
                existing: JobItem = self._table[JobItem].get(
                    job_pk(job.tenant_id, job.job_id), JOB_SK, consistent_read=True
                )
            except DoesNotExist:
                # Expired between the put and this read: the client's retry will be accepted.
                return DependencyError("job table write failed: concurrent expiry")
        return DuplicateRequest(job.job_id, existing.body_digest == digest)

    # ------------------------------------------------------------ reads

    def get(self, tenant_id: str, job_id: str) -> JobView | None:
        with translated("job table read"):
            return view_of(list(self._table.item.query(job_pk(tenant_id, job_id))))

    def listing(
        self,
        tenant_id: str,
        *,
        page: int,
        limit: int,
        channel: Channel | None,
        status: JobStatus | None,
        cursor: str | None,
        day: date | None = None,
    ) -> JobPage:
        query = _ListQuery(
            tenant_id=tenant_id,
            type_filter=JobItem.type == channel.value if channel is not None else None,
            after=decode_cursor(cursor) if cursor else None,
            day=day,
            skip=0 if cursor else (page - 1) * limit,
            limit=limit,
        )
        if status is None:
            return self._with_urls(self._all(query))
        if status in (JobStatus.FAILED, JobStatus.CANCELLED):
            return self._ended(query, status)
        if status is JobStatus.COMPLETED:
            return self._with_urls(self._completed(query))
        return self._with_urls(self._in_flight(query, status))

    def _with_urls(self, page: JobPage) -> JobPage:
        """The page with its webhooks' URLs, which no index holds (``JobItem.target``): 1
        BatchGetItem of their request items, at most a page's worth."""
        keys = [(job_pk(s.tenant_id, s.job_id), JOB_SK) for s in page.items if s.target is None]
        if not keys:
            return page
        with translated("job table read"):
            found = {item.pk: item for item in self._table[JobItem].batch_get(keys)}
        items = []
        for state in page.items:
            job = found.get(job_pk(state.tenant_id, state.job_id))
            items.append(replace(state, target=target_of(job)) if job is not None else state)
        return replace(page, items=tuple(items))

    def _ended(self, query: _ListQuery, status: JobStatus) -> JobPage:
        index = self._table.item.ended
        partition = ended_jobs_gsi_pk(query.tenant_id, status.value)
        with translated("job index read"):
            entries = query.page(_newest_first(index, partition, HeraldItem.gsi2sk, query, query.wanted))
        items = tuple(listed_states(self._table, entries))
        return JobPage(items, None, query.cursor_after(entries, "gsi2sk"))

    def search(self, tenant_id: str, search: JobSearch, *, limit: int, cursor: str | None) -> JobPage:
        """Newest first: 1 Query of gsi4 (a recipient or host), gsi2 (failed or cancelled) or gsi1,
        within [since, until) and before the cursor, joined with 1 BatchGetItem per 100 entries; at
        most ``limit`` entries read, or ``limit + SEARCH_SCAN_BUDGET`` when a filter may drop some."""
        index, partition, sort_key = self._source(tenant_id, search)
        upper = min(filter(None, (decode_cursor(cursor) if cursor else None, search.until)), default=None)
        # gsi2 holds only its own status; every other filter may drop entries that were read.
        by_status = search.status is not None and sort_key is not HeraldItem.gsi2sk
        dropping = search.subject is not None or search.channel is not None or by_status
        budget = limit + SEARCH_SCAN_BUDGET if dropping else limit
        found: list[JobState] = []
        read = 0
        last_key = ""
        with translated("job index read"):
            entries = _bounded(index, partition, _window(sort_key, search.since, upper), budget)
            for chunk in _chunks(entries, min(budget, _BATCH_GET)):
                for entry, state in zip(chunk, listed_states(self._table, chunk), strict=True):
                    read += 1
                    last_key = str(getattr(entry, sort_key.attr_name))
                    if search.keeps(state):
                        found.append(state)
                    if len(found) == limit:
                        return self._with_urls(JobPage(tuple(found), None, encode_cursor(last_key)))
        # Stopped by the reading bound, not by the end of the index: the cursor goes on from there.
        return self._with_urls(
            JobPage(tuple(found), None, encode_cursor(last_key) if read == budget else None)
        )

    def _source(self, tenant_id: str, search: JobSearch) -> tuple[Any, str, Any]:
        """The index that holds the fewest entries the search drops: the recipient's or host's
        own, the failed or cancelled jobs', or all the tenant's jobs."""
        if search.term is not None:
            return self._table.item.find, find_gsi_pk(tenant_id, search.term), HeraldItem.gsi1sk
        if search.status in (JobStatus.FAILED, JobStatus.CANCELLED):
            assert search.status is not None
            return (
                self._table.item.ended,
                ended_jobs_gsi_pk(tenant_id, search.status.value),
                HeraldItem.gsi2sk,
            )
        return self._table.item.by_tenant, jobs_gsi_pk(tenant_id), HeraldItem.gsi1sk

    def failed_between(
        self,
        tenant_id: str,
        created_from: str,
        created_until: str,
        *,
        channel: Channel | None,
        cursor: str | None,
        limit: int,
    ) -> JobPage:
        """1 Query of gsi2 (JOBS#<tenantId>#failed) reading at most ``limit`` matching entries."""
        upper = decode_cursor(cursor) if cursor else f"{created_until}#"
        with translated("job index read"):
            entries = [
                entry
                for entry in self._table.item.ended.query(
                    ended_jobs_gsi_pk(tenant_id, JobStatus.FAILED.value),
                    range_key_condition=HeraldItem.gsi2sk.between(created_from, upper),
                    filter_condition=JobItem.type == channel.value if channel is not None else None,
                    scan_index_forward=False,
                    limit=limit + 1,
                )
                # The cursor's own entry is back in the index only if its job failed again since.
                if entry.gsi2sk != upper
            ][:limit]
        states = [state_of(None, entry) for entry in entries if isinstance(entry, JobStatusItem)]
        more = len(entries) == limit
        return JobPage(
            tuple(state for state in states if state is not None),
            None,
            encode_cursor(str(entries[-1].gsi2sk)) if more else None,
        )

    def _all(self, query: _ListQuery) -> JobPage:
        index = self._table.item.by_tenant
        partition = jobs_gsi_pk(query.tenant_id)
        with translated("job index read"):
            entries = query.page(_newest_first(index, partition, HeraldItem.gsi1sk, query, query.wanted))
        return JobPage(tuple(states_of(self._table, entries)), None, query.cursor_after(entries, "gsi1sk"))

    def _completed(self, query: _ListQuery) -> JobPage:
        """Completed jobs are most jobs, and have no index of their own (it would cost a write unit
        per delivery): the newest jobs are read in chunks of status items until the page is full,
        within ``IN_FLIGHT_SCAN_BUDGET``. The total comes from the day counters."""
        matches: list[JobState] = []
        keys: list[str] = []
        with translated("job index read"):
            entries = self._newest_jobs(query, IN_FLIGHT_SCAN_BUDGET)
            for chunk in _chunks(entries, min(_BATCH_GET, max(query.wanted, 1))):
                for entry, state in zip(chunk, states_of(self._table, chunk), strict=True):
                    if state.status is JobStatus.COMPLETED:
                        matches.append(state)
                        keys.append(str(entry.gsi1sk))
                if len(matches) >= query.wanted:
                    break
        page = matches[query.skip : query.skip + query.limit]
        full = len(page) == query.limit
        return JobPage(tuple(page), None, encode_cursor(keys[query.skip + query.limit - 1]) if full else None)

    def _in_flight(self, query: _ListQuery, status: JobStatus) -> JobPage:
        """Pending or processing jobs: no index holds them, so the newest jobs are read in pages of
        status items, at most ``IN_FLIGHT_SCAN_BUDGET`` per request (in-flight jobs are recent)."""
        matches: list[JobState] = []
        scanned = 0
        last_key: str | None = None
        exhausted = True
        with translated("job index read"):
            # One entry past the budget tells whether the budget ended the scan.
            entries = self._newest_jobs(query, IN_FLIGHT_SCAN_BUDGET + 1)
            for chunk in _chunks(entries, _BATCH_GET):
                if scanned >= IN_FLIGHT_SCAN_BUDGET:
                    exhausted = False
                    break
                scanned += len(chunk)
                matches += [state for state in states_of(self._table, chunk) if state.status is status]
                last_key = str(chunk[-1].gsi1sk)
        page = matches[query.skip : query.skip + query.limit]
        next_cursor = encode_cursor(last_key) if last_key and not exhausted else None
        return JobPage(tuple(page), len(matches), next_cursor, total_exact=exhausted)

    def _newest_jobs(self, query: _ListQuery, budget: int) -> Iterator[HeraldItem]:
        return _newest_first(
            self._table.item.by_tenant, jobs_gsi_pk(query.tenant_id), HeraldItem.gsi1sk, query, budget
        )

    def owner(self, job_id: str, tenant_ids: Iterable[str]) -> str | None:
        tenants = iter(tenant_ids)
        while chunk := [
            job_pk(tenant_id, job_id) for _, tenant_id in zip(range(_BATCH_GET), tenants, strict=False)
        ]:
            with translated("job table read"):
                found = [item.pk for item in self._table[JobItem].batch_get([(pk, JOB_SK) for pk in chunk])]
            if found:
                return job_ids(found[0])[0]
        return None

    # ------------------------------------------------------------ transitions

    def mark_enqueue_failed(self, message: JobMessage, reason: str, failed_at: str) -> None:
        """The queue refused the job: it ends FAILED with the reason and can be retried."""
        actions = [
            *status_defaults(
                message.channel,
                message.priority,
                message.created_at,
                self._max_attempts,
                message.ordering_key,
            ),
            JobStatusItem.attempts.set(JobStatusItem.attempts | message.seen_attempts),
            JobStatusItem.status.set(JobStatus.FAILED.value),
            JobStatusItem.error_message.set(reason),
            JobStatusItem.completed_at.set(failed_at),
            *ended_index(message.tenant_id, message.job_id, message.created_at, JobStatus.FAILED),
        ]
        pending = JobStatusItem.pk.does_not_exist() | (JobStatusItem.status == JobStatus.PENDING.value)
        with translated("job table write"):
            status_item(self._table, message.tenant_id, message.job_id).update(
                actions=actions, condition=pending
            )

    def reopen_failed(
        self, tenant_id: str, job_id: str, extra_attempts: int, reopened_at: str
    ) -> JobState | None:
        """FAILED -> PENDING with a fresh attempt budget; None when the job is not failed."""
        item = status_item(self._table, tenant_id, job_id)
        try:
            with conditional("job table write"):
                item.update(
                    actions=[
                        JobStatusItem.status.set(JobStatus.PENDING.value),
                        JobStatusItem.max_attempts.set(JobStatusItem.attempts + extra_attempts),
                        JobStatusItem.error_message.remove(),
                        JobStatusItem.completed_at.remove(),
                        JobStatusItem.lease_until.remove(),
                        # A manual retry usually follows a fixed key: every provider gets a new chance.
                        JobStatusItem.skip_providers.remove(),
                        JobStatusItem.gsi2pk.remove(),
                        JobStatusItem.gsi2sk.remove(),
                        # Quiet from now on, for the sweeper, which starts counting its re-queues anew.
                        JobStatusItem.requeued_at.set(reopened_at),
                        JobStatusItem.sweeps.remove(),
                    ],
                    condition=JobStatusItem.status == JobStatus.FAILED.value,
                )
        except ConditionFailed:
            return None
        return state_of(None, item)


def _delivery_of(request: NotificationRequest) -> DeliveryRef | None:
    notification = request.notification
    return notification.delivery if isinstance(notification, WebhookNotification) else None


def _digest(keyed_request: NotificationRequest | None) -> bytes | None:
    """The stored half of a keyed request's fingerprint (a hex SHA-256)."""
    return bytes.fromhex(fingerprint(keyed_request))[:16] if keyed_request is not None else None


def status_item(table: Table, tenant_id: str, job_id: str) -> JobStatusItem:
    """The job's status item in ``table``, by its key (to update it)."""
    return table[JobStatusItem](job_pk(tenant_id, job_id), STATUS_SK)


def status_defaults(
    channel: Channel,
    priority: int,
    created_at: str | None,
    max_attempts: int,
    ordering_key: str | None = None,
) -> list[Any]:
    """What a status item copies from its job when a write creates it (and keeps when it exists);
    a keyed job's key, so that whatever queues it again keeps it in its key's FIFO group."""
    actions = [
        JobStatusItem.kind.set(JobStatusItem.kind | JobStatusItem),
        JobStatusItem.type.set(JobStatusItem.type | channel.value),
        JobStatusItem.priority.set(JobStatusItem.priority | priority),
        JobStatusItem.created_at.set(JobStatusItem.created_at | (created_at or "")),
        JobStatusItem.max_attempts.set(JobStatusItem.max_attempts | max_attempts),
    ]
    if ordering_key is not None:
        actions.append(JobStatusItem.ordering_key.set(JobStatusItem.ordering_key | ordering_key))
    return actions


def ended_index(tenant_id: str, job_id: str, created_at: str | None, status: JobStatus) -> list[Any]:
    """The gsi2 entry of a failed or cancelled job (written once, when it ends so; a retry of a
    failed one removes it)."""
    return [
        JobStatusItem.gsi2pk.set(ended_jobs_gsi_pk(tenant_id, status.value)),
        JobStatusItem.gsi2sk.set(job_sort_key(created_at or "", job_id)),
    ]


def states_of(table: Table, entries: Sequence[JobItem]) -> list[JobState]:
    """The states of index entries of request items, in their order (1 BatchGetItem per 100)."""
    keys = [(entry.pk, STATUS_SK) for entry in entries]
    with translated("job table read"):
        found = {item.pk: item for item in table[JobStatusItem].batch_get(keys)} if keys else {}
    states = []
    for entry in entries:
        state = state_of(entry, found.get(entry.pk))
        if state is not None:
            states.append(state)
    return states


def listed_states(table: Table, entries: Sequence[HeraldItem]) -> list[JobState]:
    """The states of index entries, in their order, each joined with the item the index does not
    hold: a request entry's status item, or a status entry's request item (for what the list shows
    of it); 1 BatchGetItem per 100 entries."""
    requests = [entry for entry in entries if isinstance(entry, JobItem)]
    if len(requests) == len(entries):
        return states_of(table, requests)
    keys = [(entry.pk, JOB_SK) for entry in entries]
    with translated("job table read"):
        found = {item.pk: item for item in table[JobItem].batch_get(keys)} if keys else {}
    states = [state_of(found.get(entry.pk), entry) for entry in entries if isinstance(entry, JobStatusItem)]
    return [state for state in states if state is not None]


def _bounded(index: Any, partition: str, condition: Condition | None, budget: int) -> Iterator[HeraldItem]:
    """At most ``budget`` entries, newest first, in Queries of at most 100 that each ask for no more
    than what remains: a Query's limit caps what it reads, and so what it costs."""
    start: dict[str, Any] | None = None
    left = budget
    while left > 0:
        size = min(left, _FILTERED_PAGE)
        results = index.query(
            partition,
            range_key_condition=condition,
            scan_index_forward=False,
            limit=size,
            page_size=size,
            last_evaluated_key=start,
        )
        for entry in results:
            left -= 1
            yield entry
        start = results.last_evaluated_key
        if start is None:
            return


def _window(sort_key: Any, since: str | None, upper: str | None) -> Condition | None:
    """Sort keys (createdAt#jobId) from ``since`` on and below ``upper`` (a time, or a cursor's key,
    itself excluded)."""
    if since is None:
        return None if upper is None else cast("Condition", sort_key < upper)
    if upper is None:
        return cast("Condition", sort_key >= since)
    return cast("Condition", sort_key.between(since, _just_before(upper)))


class _ListQuery(msgspec.Struct, frozen=True):
    tenant_id: str
    type_filter: Condition | None
    after: str | None
    skip: int
    limit: int
    day: date | None = None

    @property
    def wanted(self) -> int:
        """How many entries a page needs read: the skipped ones and the page itself."""
        return self.skip + self.limit

    def page(self, results: Iterator[HeraldItem]) -> list[Any]:
        taken: list[Any] = []
        for index, item in enumerate(results):
            if index < self.skip:
                continue
            taken.append(item)
            if len(taken) == self.limit:
                break
        return taken

    def cursor_after(self, entries: Sequence[HeraldItem], sort_key: str) -> str | None:
        return encode_cursor(str(getattr(entries[-1], sort_key))) if len(entries) == self.limit else None

    def range_condition(self, sort_key: Any) -> Condition | None:
        """Entries before the cursor, on the day asked for (sort keys start with createdAt)."""
        if self.day is None:
            return sort_key < self.after if self.after else None
        first = f"{self.day.isoformat()}T00:00:00.000Z"
        last = _just_before(self.after) if self.after else f"{self.day.isoformat()}T23:59:59.999Z#~"
        condition: Condition = sort_key.between(first, last)
        return condition


def _just_before(sort_key: str) -> str:
    """The greatest key below ``sort_key`` among keys of its fixed length (createdAt#jobId), for a
    range that must exclude the cursor's own entry."""
    return sort_key[:-1] + chr(ord(sort_key[-1]) - 1)


def _newest_first(
    index: Any, partition: str, sort_key: Any, query: _ListQuery, wanted: int
) -> Iterator[HeraldItem]:
    """At most ``wanted`` entries, newest first. Each request reads only as many entries as the page
    needs instead of a whole 1 MB page (a status poll asking for one job would otherwise read, and
    pay for, up to thousands); with a type filter it reads on until enough entries match."""
    results: Iterator[HeraldItem] = index.query(
        partition,
        range_key_condition=query.range_condition(sort_key),
        filter_condition=query.type_filter,
        scan_index_forward=False,
        limit=wanted,
        page_size=wanted if query.type_filter is None else max(wanted, _FILTERED_PAGE),
    )
    return results


def _chunks(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
