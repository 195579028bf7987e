"""Schedules of the template (EventBridge rules and Scheduler schedules), played on their cadence.

Each fire invokes the target asynchronously, as EventBridge does: a rule sends the scheduled event
(or its target's constant Input), a Scheduler schedule sends its target's Input.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from herald_local.awslambda.functions import FunctionUnavailable, Invocation
from herald_local.cloudformation.topology import ScheduleSpec
from herald_local.config import ACCOUNT_ID
from herald_local.event_sources.schedule_expressions import (
    Cron,
    Rate,
    UnsupportedExpression,
    parse_expression,
)

log = logging.getLogger(__name__)

InvokeFunction = Callable[[str, Any], Invocation]


def scheduled_event(schedule: ScheduleSpec, fired_at: datetime, region: str) -> dict[str, Any]:
    """The event an EventBridge rule sends for a scheduled fire."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT_ID,
        "time": fired_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [schedule.arn],
        "detail": {},
    }


def schedule_payload(schedule: ScheduleSpec, fired_at: datetime, region: str) -> Any:
    if schedule.input is not None:
        return json.loads(schedule.input)
    # A Scheduler schedule without Input has no event envelope to send.
    return scheduled_event(schedule, fired_at, region) if schedule.sends_event else {}


class SchedulePlayer:
    """Fires every schedule on its cadence, or every ``every`` seconds when the stack is told to
    speed them up (the sweeper every few seconds instead of every five minutes, say)."""

    def __init__(
        self, schedules: list[ScheduleSpec], invoke: InvokeFunction, region: str, every: float | None = None
    ) -> None:
        self._invoke = invoke
        self._region = region
        self._every = every
        self._stop = threading.Event()
        self._executor = ThreadPoolExecutor(4, thread_name_prefix="schedule")
        self._thread = threading.Thread(target=self._run, name="schedules", daemon=True)
        now = datetime.now(UTC)
        self._entries: list[tuple[ScheduleSpec, Rate | Cron, ZoneInfo]] = []
        for schedule in schedules:
            try:
                zone = ZoneInfo(schedule.timezone)
                self._entries.append(
                    (schedule, parse_expression(schedule.expression, now.astimezone(zone)), zone)
                )
            except UnsupportedExpression as exc:
                log.warning(
                    "%s (%s) is not played locally: %s", schedule.logical_id, schedule.expression, exc
                )

    @property
    def played(self) -> list[ScheduleSpec]:
        return [schedule for schedule, _, _ in self._entries]

    def start(self) -> None:
        if self._entries:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _run(self) -> None:
        now = datetime.now(UTC)
        upcoming: dict[int, datetime] = {}
        for index in range(len(self._entries)):
            first = self._next(index, now)
            if first is not None:
                upcoming[index] = first
        while upcoming and not self._stop.is_set():
            index, fire_at = min(upcoming.items(), key=lambda item: item[1])
            if self._stop.wait(max((fire_at - datetime.now(UTC)).total_seconds(), 0)):
                return
            self._executor.submit(self.fire, self._entries[index][0], fire_at)
            following = self._next(index, fire_at)
            if following is None:
                del upcoming[index]
            else:
                upcoming[index] = following

    def _next(self, index: int, after: datetime) -> datetime | None:
        if self._every is not None:
            return after + timedelta(seconds=self._every)
        _, expression, zone = self._entries[index]
        following = expression.next_after(after.astimezone(zone))
        return None if following is None else following.astimezone(UTC)

    def fire(self, schedule: ScheduleSpec, fired_at: datetime) -> None:
        # Sped up, a schedule fires every few seconds: its line would drown the console.
        log.log(
            logging.DEBUG if self._every else logging.INFO,
            "%s fires %s",
            schedule.logical_id,
            schedule.function,
        )
        try:
            invocation = self._invoke(schedule.function, schedule_payload(schedule, fired_at, self._region))
        except (FunctionUnavailable, ValueError) as exc:
            log.error("%s: %s", schedule.logical_id, exc)
            return
        if invocation.failed:
            log.error(
                "%s: %s failed (EventBridge would retry the asynchronous invocation)",
                schedule.logical_id,
                schedule.function,
            )
