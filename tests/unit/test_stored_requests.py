"""How a job's request is stored: deflated JSON that reads back exactly what was accepted."""

from __future__ import annotations

import json
import zlib
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bench.samples import ORDER_EMAIL_HTML, ORDER_EVENT
from herald.adapters.store.job_items import request_of
from herald.adapters.store.models import DeflatedJSONAttribute, JobItem
from herald.domain.notifications import EmailNotification

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), JSON_VALUES, max_size=6))
def test_any_json_document_reads_back_as_it_was_written(document: dict[str, Any]) -> None:
    attribute = DeflatedJSONAttribute()
    assert attribute.deserialize(attribute.serialize(document)) == document


def test_a_1_kb_event_is_stored_in_about_two_thirds_of_its_size() -> None:
    document = {"url": "https://hooks.example.com/in", "payload": ORDER_EVENT, "method": "POST"}
    stored = DeflatedJSONAttribute().serialize(document)
    text = json.dumps(document, separators=(",", ":")).encode()
    assert len(text) > 1024
    assert len(stored) < 0.7 * len(text)
    assert zlib.decompress(stored, wbits=-zlib.MAX_WBITS) == text


def test_non_ascii_text_is_stored_as_utf8_not_escaped() -> None:
    stored = DeflatedJSONAttribute().serialize({"subject": "Zamówienie opłacone ✓"})
    assert zlib.decompress(stored, wbits=-zlib.MAX_WBITS).decode() == '{"subject":"Zamówienie opłacone ✓"}'


def _job(**attributes: Any) -> JobItem:
    return JobItem("JOB#t1#j1", "JOB", type="email", priority=5, max_attempts=3, gsi1sk="x#j1", **attributes)


def test_a_job_item_reads_its_deflated_request() -> None:
    email = {"to": "marta@example.org", "subject": "Your order", "body": ORDER_EMAIL_HTML}
    mail = request_of(_job(request=email)).notification
    assert isinstance(mail, EmailNotification)
    assert (mail.to, mail.subject, mail.body) == ("marta@example.org", "Your order", ORDER_EMAIL_HTML)
