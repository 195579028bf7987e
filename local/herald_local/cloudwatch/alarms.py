"""CloudWatch alarms of the template, played on a short cadence.

An alarm is played when the local stack has its metric: an SQS queue's depth (the queue attribute
the AWS/SQS metric reports, read from moto), or the Sum of what the local stack counts itself as
Lambda and API Gateway would (a function's Invocations, Errors and Throttles, an API's Count, 4xx
and 5xx; see ``metrics``) over the alarm's Period. It is evaluated every ``cadence`` seconds (at most
every Period), each evaluation one datapoint: the last EvaluationPeriods datapoints are kept and the
alarm goes to ALARM when DatapointsToAlarm of them breach. On a state change it publishes
CloudWatch's JSON notification to its SNS actions in moto, which delivers it to every subscriber
(functions through the SNS bridge) as SNS would.
"""

from __future__ import annotations

import json
import logging
import operator
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from herald_local.aws.regions import region_description
from herald_local.cloudformation.topology import AlarmSpec
from herald_local.cloudwatch.metrics import API_GATEWAY, LAMBDA, LocalMetrics
from herald_local.config import ACCOUNT_ID, DEFAULT_ALARM_SECONDS
from herald_local.host.loops import BackgroundLoop

log = logging.getLogger(__name__)

# AWS/SQS metric name -> the queue attribute holding its current value.
QUEUE_METRICS = {
    "ApproximateNumberOfMessagesVisible": "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible": "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed": "ApproximateNumberOfMessagesDelayed",
}
COMPARISONS: dict[str, tuple[Callable[[float, float], bool], str]] = {
    "GreaterThanThreshold": (operator.gt, "greater than"),
    "GreaterThanOrEqualToThreshold": (operator.ge, "greater than or equal to"),
    "LessThanThreshold": (operator.lt, "less than"),
    "LessThanOrEqualToThreshold": (operator.le, "less than or equal to"),
}

# The metrics the local stack counts itself, and the dimension that names what they are about.
COUNTED = {
    LAMBDA: ("FunctionName", {"Invocations", "Errors", "Throttles"}),
    API_GATEWAY: ("ApiId", {"Count", "4xx", "5xx"}),
}

ReadMetric = Callable[[], float]
Publish = Callable[[str, str, str], None]


def _timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+0000"


class AlarmState:
    """One alarm's datapoints and state; ``observe`` returns the notification of a state change."""

    def __init__(self, alarm: AlarmSpec, region: str) -> None:
        self.alarm = alarm
        self.region = region
        self.state = "INSUFFICIENT_DATA"
        self._datapoints: deque[tuple[datetime, float]] = deque(maxlen=alarm.evaluation_periods)

    def _breaches(self, value: float) -> bool:
        compare, _ = COMPARISONS[self.alarm.comparison]
        return compare(value, self.alarm.threshold)

    def observe(self, value: float, moment: datetime) -> dict[str, Any] | None:
        self._datapoints.append((moment, value))
        breaching = [point for point in self._datapoints if self._breaches(point[1])]
        new_state = "ALARM" if len(breaching) >= self.alarm.datapoints_to_alarm else "OK"
        if new_state == self.state:
            return None
        old_state, self.state = self.state, new_state
        return self.notification(old_state, moment)

    def _reason(self) -> str:
        _, words = COMPARISONS[self.alarm.comparison]
        points = ", ".join(f"{value} ({moment:%d/%m/%y %H:%M:%S})" for moment, value in self._datapoints)
        count = sum(1 for _, value in self._datapoints if self._breaches(value))
        verb = "was" if count == 1 else "were"
        qualifier = "" if self.state == "ALARM" else "not "
        return (
            f"Threshold Crossed: {count} out of the last {len(self._datapoints)} datapoints [{points}] {verb} "
            f"{qualifier}{words} the threshold ({self.alarm.threshold}) (minimum {self.alarm.datapoints_to_alarm} "
            f"datapoint for OK -> ALARM transition)."
        )

    def notification(self, old_state: str, moment: datetime) -> dict[str, Any]:
        alarm = self.alarm
        return {
            "AlarmName": alarm.name,
            "AlarmDescription": alarm.description,
            "AWSAccountId": ACCOUNT_ID,
            "AlarmConfigurationUpdatedTimestamp": _timestamp(moment),
            "NewStateValue": self.state,
            "NewStateReason": self._reason(),
            "StateChangeTime": _timestamp(moment),
            "Region": region_description(self.region),
            "AlarmArn": alarm.arn,
            "OldStateValue": old_state,
            "OKActions": list(alarm.ok_actions),
            "AlarmActions": list(alarm.alarm_actions),
            "InsufficientDataActions": [],
            "Trigger": {
                "MetricName": alarm.metric_name,
                "Namespace": alarm.namespace,
                "StatisticType": "Statistic",
                "Statistic": alarm.statistic.upper(),
                "Unit": None,
                "Dimensions": [{"value": value, "name": name} for name, value in alarm.dimensions],
                "Period": alarm.period_seconds,
                "EvaluationPeriods": alarm.evaluation_periods,
                "DatapointsToAlarm": alarm.datapoints_to_alarm,
                "ComparisonOperator": alarm.comparison,
                "Threshold": alarm.threshold,
                "TreatMissingData": alarm.treat_missing_data,
                "EvaluateLowSampleCountPercentile": "",
            },
        }

    def actions(self) -> tuple[str, ...]:
        return self.alarm.alarm_actions if self.state == "ALARM" else self.alarm.ok_actions

    def subject(self) -> str:
        return f'{self.state}: "{self.alarm.name}" in {region_description(self.region)}'


class AlarmPlayer(BackgroundLoop):
    def __init__(
        self,
        state: AlarmState,
        read_metric: ReadMetric,
        publish: Publish,
        cadence: float = DEFAULT_ALARM_SECONDS,
    ) -> None:
        super().__init__(f"{state.alarm.logical_id}-alarm", join_seconds=5)
        self.state = state
        self._read_metric = read_metric
        self._publish = publish
        self._every = min(cadence, state.alarm.period_seconds)

    def evaluate(self) -> None:
        notification = self.state.observe(self._read_metric(), datetime.now(UTC))
        if notification is None:
            return
        level = logging.WARNING if self.state.state == "ALARM" else logging.INFO
        log.log(level, "alarm %s is now %s", self.state.alarm.name, self.state.state)
        for topic_arn in self.state.actions():
            if ":sns:" in topic_arn:
                self._publish(topic_arn, self.state.subject(), json.dumps(notification))

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            try:
                self.evaluate()
            except Exception:  # noqa: BLE001 - one failed reading must not end the alarm
                log.exception("alarm %s could not be evaluated", self.state.alarm.name)


def _queue_reader(alarm: AlarmSpec, sqs: Any) -> ReadMetric:
    queue_url = sqs.get_queue_url(QueueName=dict(alarm.dimensions)["QueueName"])["QueueUrl"]
    attribute = QUEUE_METRICS[alarm.metric_name]

    def read_metric() -> float:
        attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=[attribute])["Attributes"]
        return float(attributes[attribute])

    return read_metric


def metric_reader(alarm: AlarmSpec, sqs: Any, metrics: LocalMetrics) -> ReadMetric | None:
    """How the local stack reads the alarm's metric; None when it has no source for it."""
    dimensions = dict(alarm.dimensions)
    if alarm.comparison not in COMPARISONS:
        return None
    if alarm.namespace == "AWS/SQS" and alarm.metric_name in QUEUE_METRICS and "QueueName" in dimensions:
        return _queue_reader(alarm, sqs)
    subject, names = COUNTED.get(alarm.namespace, ("", set()))
    if alarm.metric_name in names and subject in dimensions and alarm.statistic == "Sum":
        return lambda: metrics.total(alarm.namespace, alarm.metric_name, dimensions, alarm.period_seconds)
    return None


def alarm_player(
    alarm: AlarmSpec, *, sqs: Any, sns: Any, metrics: LocalMetrics, region: str, cadence: float
) -> AlarmPlayer | None:
    """The player of an alarm (reading through ``sqs`` or ``metrics``, publishing through ``sns``), or
    None when the local stack has no source for its metric."""
    read_metric = metric_reader(alarm, sqs, metrics)
    if read_metric is None:
        return None

    def publish(topic_arn: str, subject: str, message: str) -> None:
        sns.publish(TopicArn=topic_arn, Subject=subject, Message=message)

    return AlarmPlayer(AlarmState(alarm, region), read_metric, publish, cadence)
