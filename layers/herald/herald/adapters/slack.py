"""The operators' chat: a Slack incoming webhook, whose URL is kept in an SSM SecureString.

The URL is a credential (whoever has it can post to the channel): it is read from Parameter Store
(cached for minutes in a warm container), never logged, and no error names it. Every piece of text
that did not come from Herald itself (an alarm's reason, a provider's error) is escaped, so it can
neither format the message nor mention ``<!channel>``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import requests
from botocore.exceptions import BotoCoreError, ClientError
from cachetools import TTLCache

from herald import USER_AGENT
from herald.domain.alerts import (
    AlarmChange,
    ChatOutcome,
    JobAlert,
    JobAlertsPaused,
    Notice,
    PaymentAlert,
    PlainNotice,
)
from herald.domain.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient

TIMEOUT = (3.05, 10.0)
URL_TTL_SECONDS = 300.0
# Block Kit's limits: a header's text, a section's text, a field's text.
HEADER_CHARS = 150
SECTION_CHARS = 3000
FIELD_CHARS = 2000
# The notification text beside the blocks: one line's worth.
FALLBACK_CHARS = 300
_STATE_ICONS = {
    "ALARM": ":rotating_light:",
    "OK": ":white_check_mark:",
    "INSUFFICIENT_DATA": ":grey_question:",
}


class ParameterSecret:
    """A SecureString of Parameter Store, cached; None when the parameter does not exist."""

    def __init__(
        self,
        name: str,
        ssm: Callable[[], SSMClient],
        ttl_seconds: float = URL_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._name = name
        self._ssm = ssm
        self._cache: TTLCache[str, str | None] = TTLCache(1, ttl_seconds, timer=clock)

    def __call__(self) -> str | None:
        if self._name not in self._cache:
            self._cache[self._name] = self._read()
        return self._cache[self._name]

    def _read(self) -> str | None:
        try:
            answer = self._ssm().get_parameter(Name=self._name, WithDecryption=True)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "ParameterNotFound":
                return None
            raise DependencyError(f"parameter store unavailable: {code}") from exc
        except BotoCoreError as exc:
            raise DependencyError(f"parameter store unavailable: {type(exc).__name__}") from exc
        value = answer["Parameter"].get("Value", "").strip()
        return value or None


def escaped(text: str, limit: int) -> str:
    """Text shown as it is: Slack's three control characters escaped, cut to ``limit``."""
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return cut.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": text[:HEADER_CHARS], "emoji": True}}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _fields(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "section",
        "fields": [{"type": "mrkdwn", "text": f"*{name}*\n{value}"} for name, value in pairs],
    }


def _alarm(notice: AlarmChange, queue_depth: int | None) -> dict[str, Any]:
    icon = _STATE_ICONS.get(notice.new_state, ":bell:")
    pairs = [
        ("State", escaped(f"{notice.old_state} → {notice.new_state}", FIELD_CHARS)),
        ("Metric", escaped(f"{notice.namespace} {notice.metric}", FIELD_CHARS)),
    ]
    if queue_depth is not None:
        pairs.append(("Queue depth", f"{queue_depth} message{'' if queue_depth == 1 else 's'} waiting"))
    pairs.append(("Changed at", escaped(notice.changed_at, FIELD_CHARS)))
    blocks = [
        _header(f"{icon} {notice.new_state}: {notice.name}"),
        _section(escaped(notice.description or notice.name, SECTION_CHARS)),
        _fields(*pairs),
        _section("*Reason*\n" + escaped(notice.reason, SECTION_CHARS - 12)),
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Open the alarm in CloudWatch"},
                    "url": notice.console_url,
                }
            ],
        },
    ]
    return {"text": f"{notice.new_state}: {notice.name}", "blocks": blocks}


def _job(notice: JobAlert) -> dict[str, Any]:
    blocks = [
        _header(":x: A job went to the dead-letter queue"),
        _fields(
            ("Job", escaped(notice.job_id, FIELD_CHARS)),
            ("Tenant", escaped(notice.tenant_id, FIELD_CHARS)),
            ("Channel", escaped(f"{notice.channel} (priority {notice.priority})", FIELD_CHARS)),
            ("Attempts", str(notice.attempts)),
        ),
        _section("*Error*\n" + escaped(notice.error, SECTION_CHARS - 12)),
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": escaped(
                        f"herald dlq show {notice.job_id}  ·  herald dlq redrive --job {notice.job_id}",
                        SECTION_CHARS,
                    ),
                }
            ],
        },
    ]
    return {"text": f"Job {notice.job_id} dead-lettered: {notice.error}", "blocks": blocks}


def _paused(notice: JobAlertsPaused) -> dict[str, Any]:
    text = (
        f"More than {notice.limit} jobs went to the dead-letter queue since {notice.since}. "
        f"Alerts for single jobs are paused until {notice.until}; `herald dlq list` shows them all."
    )
    return {
        "text": text,
        "blocks": [_header(":warning: Job alerts paused"), _section(escaped(text, SECTION_CHARS))],
    }


def _payment(notice: PaymentAlert) -> dict[str, Any]:
    blocks = [
        _header(":moneybag: A payment did not move the plan"),
        _fields(
            ("Tenant", escaped(notice.tenant_id, FIELD_CHARS)),
            ("Plan", escaped(notice.plan, FIELD_CHARS)),
            ("Processor", escaped(f"{notice.processor} {notice.event}", FIELD_CHARS)),
            ("Event", escaped(notice.event_id, FIELD_CHARS)),
        ),
        _section("*Reason*\n" + escaped(notice.reason, SECTION_CHARS - 12)),
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": escaped(
                        "Check the payment at the processor; to grant the plan by hand: "
                        f"herald tenant set-plan {notice.tenant_id} {notice.plan}",
                        SECTION_CHARS,
                    ),
                }
            ],
        },
    ]
    text = f"{notice.processor} payment refused for tenant {notice.tenant_id}: {notice.reason}"
    return {"text": text, "blocks": blocks}


def _plain(notice: PlainNotice) -> dict[str, Any]:
    return {
        "text": notice.subject,
        "blocks": [_header(notice.subject), _section(escaped(notice.text, SECTION_CHARS))],
    }


def slack_message(notice: Notice, queue_depth: int | None = None) -> dict[str, Any]:
    """The incoming-webhook payload: Block Kit, and ``text``, what notifications show (escaped too)."""
    if isinstance(notice, AlarmChange):
        message = _alarm(notice, queue_depth)
    elif isinstance(notice, JobAlert):
        message = _job(notice)
    elif isinstance(notice, JobAlertsPaused):
        message = _paused(notice)
    elif isinstance(notice, PaymentAlert):
        message = _payment(notice)
    else:
        message = _plain(notice)
    return {**message, "text": escaped(message["text"], FALLBACK_CHARS)}


class SlackWebhook:
    """Posts notices to the incoming webhook whose URL ``url`` returns (None: not configured)."""

    def __init__(self, url: Callable[[], str | None], *, local_origin: str | None = None) -> None:
        self._url = url
        self._local_origin = local_origin
        self._session = requests.Session()
        self._session.trust_env = False

    def _allowed(self, url: str) -> bool:
        """https only (the message is readable on the way otherwise), or the local stack's sandbox."""
        if url.startswith("https://"):
            return True
        if self._local_origin is None:
            return False
        # The operator's own setting, not a tenant's: the sandbox's origin is enough (its Slack path).
        local = urlsplit(self._local_origin)
        return url.startswith(f"{local.scheme}://{local.netloc}/")

    def post(self, notice: Notice, queue_depth: int | None) -> ChatOutcome:
        url = self._url()
        if url is None:
            return ChatOutcome.NOT_CONFIGURED
        if not self._allowed(url):
            return ChatOutcome.REFUSED
        body = json.dumps(slack_message(notice, queue_depth)).encode()
        try:
            answer = self._session.post(
                url,
                data=body,
                headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
                timeout=TIMEOUT,
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            # requests' messages quote the URL, which is the credential: only the kind is kept.
            raise DependencyError(f"chat webhook unreachable: {type(exc).__name__}") from exc
        if answer.status_code == 429 or answer.status_code >= 500:
            raise DependencyError(f"chat webhook answered {answer.status_code}")
        return ChatOutcome.POSTED if answer.status_code < 300 else ChatOutcome.REFUSED
