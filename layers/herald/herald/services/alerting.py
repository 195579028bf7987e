"""Telling operators: job alerts from the final-failure path (rate-limited), and the AlertFunction's
relay of everything on the alert topic to the operators' chat.

Job alerts cost only failures: per dead-lettered job at most 1 UpdateItem of a small counter item
(1 write unit) and 1 SNS publish; a delivered job costs nothing. The counter is shared by every
container, so across all workers a window lets ``JOB_ALERTS_PER_WINDOW`` alerts through, then one
"paused" notice; a container that has seen its window over the limit stops writing the counter
until the window ends, so an outage does not pay a write per failure either.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from herald.domain.alerts import (
    JOB_ALERTS_PER_WINDOW,
    AlarmChange,
    ChatOutcome,
    JobAlert,
    JobAlertsPaused,
    Notice,
    PaymentAlert,
    alert_window,
    read_notice,
)
from herald.domain.clock import utc_now
from herald.domain.errors import DependencyError
from herald.observability import count, logger
from herald.services.ports.jobs import QueueDepths
from herald.services.ports.platform import AlertCounter, AlertPublisher, ChatNotifier


class RateLimitedAlerts:
    """The ``Alerts`` of the workers and the sweeper."""

    def __init__(
        self,
        counter: AlertCounter,
        publisher: AlertPublisher,
        *,
        per_window: int = JOB_ALERTS_PER_WINDOW,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._counter = counter
        self._publisher = publisher
        self._per_window = per_window
        self._clock = clock
        # The window this container knows to be over its limit: no counter write until it ends.
        self._paused: str | None = None

    def dead_lettered(self, alert: JobAlert) -> None:
        window = alert_window(self._clock())
        if self._paused == window.key:
            count("JobAlertsHeld")
            return
        try:
            sent = self._counter.count(window)
            if sent <= self._per_window:
                self._publisher.publish(alert.subject, alert.to_message())
                count("JobAlertsSent")
                return
            self._paused = window.key
            if sent == self._per_window + 1:
                paused = JobAlertsPaused.of(window, self._per_window)
                self._publisher.publish(paused.subject, paused.to_message())
            count("JobAlertsHeld")
        except DependencyError as exc:
            # Reported, not raised: the job is already FAILED with its dead-letter copy, and the
            # dead-letter queue's alarm still goes off.
            logger.error("job alert not sent", extra={"job_id": alert.job_id, "reason": str(exc)})
            count("JobAlertsFailed")


class AlertRelay:
    """The AlertFunction: each message of the alert topic, as a chat message."""

    def __init__(self, chat: ChatNotifier, depths: QueueDepths, queue_urls: Mapping[str, str]) -> None:
        self._chat = chat
        self._depths = depths
        # Queue name -> URL, for the depth of the queue an alarm watches.
        self._queue_urls = queue_urls

    def relay(self, subject: str | None, message: str) -> ChatOutcome:
        notice = read_notice(subject, message)
        if isinstance(notice, AlarmChange) and not notice.is_news:
            logger.info("alarm settled into OK; not posted", extra=_summary(notice))
            return ChatOutcome.SKIPPED
        outcome = self._chat.post(notice, self._queue_depth(notice))
        if outcome is ChatOutcome.NOT_CONFIGURED:
            logger.warning("no chat webhook is configured; alert logged only", extra=_summary(notice))
        elif outcome is ChatOutcome.REFUSED:
            logger.error("the chat refused the alert; check its webhook", extra=_summary(notice))
            count("AlertsRefused")
        else:
            count("AlertsPosted")
        return outcome

    def _queue_depth(self, notice: Notice) -> int | None:
        url = self._queue_urls.get(notice.queue_name or "") if isinstance(notice, AlarmChange) else None
        if url is None:
            return None
        try:
            return self._depths.visible(url)
        except DependencyError as exc:
            # The depth only adds to the message; the alert goes out without it.
            logger.warning("queue depth unavailable", extra={"reason": str(exc)})
            return None


def _summary(notice: Notice) -> dict[str, str]:
    if isinstance(notice, AlarmChange):
        return {"alarm": notice.name, "state": notice.new_state, "reason": notice.reason}
    if isinstance(notice, JobAlert):
        return {"job_id": notice.job_id, "tenant_id": notice.tenant_id, "error": notice.error}
    if isinstance(notice, JobAlertsPaused):
        return {"paused_until": notice.until}
    if isinstance(notice, PaymentAlert):
        return {"event_id": notice.event_id, "tenant_id": notice.tenant_id, "reason": notice.reason}
    return {"subject": notice.subject}
