"""Finding any message: what the job list shows of a request and finds it by, and how a search of a
tenant's jobs is narrowed."""

from __future__ import annotations

from urllib.parse import urlsplit

import msgspec

from herald.domain.job_records import JobState
from herald.domain.jobs import Channel, JobStatus
from herald.domain.notifications import EmailNotification, Notification

# A subject is kept this long for the list and its "contains" search: enough to tell messages
# apart, short enough that the request item and two index entries stay small.
SUBJECT_KEPT = 120


class Listed(msgspec.Struct, frozen=True):
    """What the job list shows of an accepted request (the recipient or URL, an email's subject)
    and the term it is found by: the lowercased recipient, or the URL's lowercased host."""

    target: str
    term: str
    subject: str | None

    @classmethod
    def of(cls, notification: Notification) -> Listed:
        if isinstance(notification, EmailNotification):
            return cls(notification.to, notification.to.lower(), notification.subject[:SUBJECT_KEPT])
        if notification.delivery is not None:
            return cls(notification.url, subscription_term(notification.delivery.subscription_id), None)
        return cls(notification.url, host_of(notification.url), None)


def subscription_term(subscription_id: str) -> str:
    """What a subscription's deliveries are found by (its history): not a host, so a search by host
    never mixes them in."""
    return f"subscription:{subscription_id}"


def host_of(url: str) -> str:
    """A URL's host, lowercased (the webhook URLs Herald accepts always have one)."""
    return (urlsplit(url).hostname or "").lower()


class JobSearch(msgspec.Struct, frozen=True):
    """A search of one tenant's jobs: ``term`` is a recipient or URL host (lowercased), ``subject``
    a lowercased fragment, ``since``/``until`` the acceptance window [since, until) as ISO-8601
    UTC strings."""

    term: str | None = None
    subject: str | None = None
    since: str | None = None
    until: str | None = None
    channel: Channel | None = None
    status: JobStatus | None = None

    def keeps(self, state: JobState) -> bool:
        """Whether a job passes the filters no index key applies (type, status, subject)."""
        if self.channel is not None and state.channel is not self.channel:
            return False
        if self.status is not None and state.status is not self.status:
            return False
        return self.subject is None or self.subject in (state.subject or "").lower()
