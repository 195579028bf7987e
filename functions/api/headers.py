"""Request headers more than one route file reads."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Header

from herald.http.requests import IDEMPOTENCY_KEY_RULE

# Checked by the accept services, after the API key, with the body field's rule and message.
IdempotencyHeader = Annotated[
    str | None, Header(alias="Idempotency-Key", json_schema_extra=IDEMPOTENCY_KEY_RULE)
]
