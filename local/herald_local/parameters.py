"""Parameter values of the local stack: the template's defaults, except where local must differ."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from herald_local.config import ConfigError, LocalConfig

LOCAL_STAGE = "local"
# Template parameter -> sandbox provider whose base URL replaces the real provider's API.
PROVIDER_URL_PARAMETERS = {
    "SendgridBaseUrl": "sendgrid",
    "ResendBaseUrl": "resend",
    "PostmarkBaseUrl": "postmark",
}
RETRY_DELAY_PARAMETER = "RetryBaseDelaySeconds"
STUCK_JOB_PARAMETER = "StuckJobSeconds"
# The SSM SecureString AlertFunction reads the Slack webhook URL from; the stack puts the sandbox's there.
SLACK_PARAMETER = "SlackWebhookParameterName"
LOCAL_SLACK_PARAMETER = "/herald/local/slack-webhook-url"


def local_parameters(
    template: dict[str, Any], config: LocalConfig, provider_url: Callable[[str], str]
) -> dict[str, str]:
    """Fails loudly when the template no longer declares a parameter the local stack overrides."""
    overrides = {"Stage": LOCAL_STAGE, SLACK_PARAMETER: LOCAL_SLACK_PARAMETER}
    overrides |= {parameter: provider_url(name) for parameter, name in PROVIDER_URL_PARAMETERS.items()}
    if config.retry_base_delay is not None:
        overrides[RETRY_DELAY_PARAMETER] = config.retry_base_delay
    if config.stuck_job_seconds is not None:
        overrides[STUCK_JOB_PARAMETER] = config.stuck_job_seconds
    unknown = sorted(set(overrides) - set(template.get("Parameters") or {}))
    if unknown:
        raise ConfigError(
            f"template.yaml has no parameter(s) {', '.join(unknown)} for the local stack to set"
        )
    return overrides
