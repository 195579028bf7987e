"""The fan-out queue: one message per page of an event's subscriptions (``FanoutPage``), and its
JSON, which the fan-out function decodes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import msgspec

from herald.adapters.queueing import send_batches
from herald.domain.events import FanoutPage

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(FanoutPage)


def encode_page(page: FanoutPage) -> str:
    return _encoder.encode(page).decode()


def decode_page(raw: str) -> FanoutPage:
    """msgspec.ValidationError / DecodeError (ValueError subclasses) for a body that is not a page."""
    return _decoder.decode(raw)


class SqsFanoutQueue:
    def __init__(self, url: str, sqs: Callable[[], SQSClient]) -> None:
        self._url = url
        self._sqs = sqs

    def enqueue_pages(self, pages: Sequence[FanoutPage]) -> None:
        # Fair queue: one tenant's large fan-out does not hold another tenant's pages back.
        send_batches(self._sqs, self._url, [(page.tenant_id, encode_page(page)) for page in pages], "fanout")
