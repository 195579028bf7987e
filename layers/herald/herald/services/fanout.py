"""Fanning one event out: each fan-out message (a page of at most 100 subscription ids) becomes one
delivery job per subscription of the page that receives the event, queued like any webhook job.

Exactly once per (event, subscription), whatever crashes where: a delivery job's id derives from the
pair, and it is written with a condition that it does not exist. A page that fails or whose worker
dies comes back from its queue and runs again: the jobs written before are not written twice, and
those of them no worker has claimed yet are queued again (a job queued twice is sent once: the
worker's claim is a conditional write on its attempt). Why not a stream-driven fan-out: a DynamoDB
stream record cannot be re-read once its batch succeeded, and the stream's batch size would bound a
fan-out's parallelism; the pages are plain SQS messages with their own retries and dead-letter queue.

Per page, AWS calls: 1 GetItem (the event), 1 Query (the page's subscriptions and their breakers),
1 conditional PutItem per delivery (side by side), 1 BatchGetItem per 100 deliveries only when a
page runs again, and 1 SendMessageBatch per 10 deliveries.
"""

from __future__ import annotations

import msgspec
from msgspec.structs import replace

from herald.domain.breakers import BreakerState
from herald.domain.clock import epoch_seconds, parse_iso
from herald.domain.events import Event, FanoutPage, Subscription, delivery_body, delivery_job_id
from herald.domain.job_records import JobMessage, NewJob
from herald.domain.jobs import DEFAULT_PRIORITY, LOWEST_PRIORITY, Channel, queue_priority
from herald.domain.notifications import DeliveryRef, NotificationRequest, WebhookNotification
from herald.domain.plans import Plan, retention_end
from herald.observability import count, logger
from herald.services.ports.events import DeliveryJobs, DeliveryQueue, EventStore


class FannedOut(msgspec.Struct, frozen=True):
    """What one page did: deliveries it is for, and how many of their jobs it queued now."""

    event_id: str
    deliveries: int
    queued: int


class FanoutWorker:
    def __init__(
        self, *, events: EventStore, jobs: DeliveryJobs, queue: DeliveryQueue, max_attempts: int
    ) -> None:
        self._events = events
        self._jobs = jobs
        self._queue = queue
        self._max_attempts = max_attempts

    def run(self, page: FanoutPage) -> FannedOut:
        """Raises ``DependencyError`` when the table or the queue fails: the page comes back."""
        event = self._events.get(page.tenant_id, page.event_id)
        if event is None:
            # Past its retention (a page redriven very late), or never stored: nothing to deliver.
            logger.warning("fan-out page of an unknown event", extra={"event_id": page.event_id})
            return FannedOut(page.event_id, 0, 0)
        audience = [
            subscription
            for subscription, breaker in self._events.page(page.tenant_id, page.after, page.last)
            if breaker.state is not BreakerState.DISABLED and subscription.audience_of(event)
        ]
        priority = LOWEST_PRIORITY if page.plan == Plan.FREE else DEFAULT_PRIORITY
        made = [self._job(event, subscription, priority, page.plan) for subscription in audience]
        jobs = [job for job, _ in made]
        to_queue = set(self._jobs.insert_deliveries(jobs))
        messages = [_message(job, sent, page) for job, sent in made if job.job_id in to_queue]
        if messages:
            self._queue.enqueue_batch(messages, queue_priority(priority))
        count("FanoutJobsQueued", {}, value=len(messages))
        return FannedOut(event.event_id, len(jobs), len(messages))

    def _job(
        self, event: Event, subscription: Subscription, priority: int, plan: str
    ) -> tuple[NewJob, NotificationRequest]:
        """The delivery job as it is stored, and its request as its message carries it: the body
        (the event's payload) travels in the message only; the event item holds it once, and a
        worker that reads the job from the table reads the event's body with it."""
        sent = WebhookNotification(
            url=subscription.url,
            payload=delivery_body(event),
            headers=subscription.headers or {},
            delivery=DeliveryRef(
                event.event_id, subscription.subscription_id, event.type, subscription.rate_limit_per_second
            ),
        )
        job = NewJob(
            job_id=delivery_job_id(event.tenant_id, event.event_id, subscription.subscription_id),
            tenant_id=event.tenant_id,
            request=NotificationRequest(replace(sent, payload={})),
            priority=priority,
            max_attempts=self._max_attempts,
            # Counted from the event's acceptance: its deliveries' latency is the event's.
            created_at=event.created_at,
            expires_at=event.expires_at or epoch_seconds(retention_end(plan, parse_iso(event.created_at))),
        )
        return job, NotificationRequest(sent)


def _message(job: NewJob, sent: NotificationRequest, page: FanoutPage) -> JobMessage:
    return JobMessage(
        job.job_id,
        job.tenant_id,
        Channel.WEBHOOK,
        page.plan,
        0,
        sent,
        job.priority,
        job.created_at,
        page.correlation_id,
    )
