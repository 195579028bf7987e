"""The committed sample events of events/inbound/: each is what the generator writes today, and
each verifies with the test-only credentials at the moment it was signed (and not long after)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from herald.adapters.inbound.verification import TOLERANCE_SECONDS
from herald.domain.inbound import DeliveryEvent, InvalidSignature, SubscriptionEvent
from herald.http.guards import raw_body
from herald_harness.inbound_samples import SAMPLES, SIGNED_AT, Sample, rendered, sample_path

REWRITE = "rewrite them with: .venv/bin/python -m herald_harness.inbound_samples"


def verify(sample: Sample, event: dict[str, Any], now: float) -> None:
    sample.sender.verify(event["headers"], raw_body(event), now)


def committed(sample: Sample) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(sample_path(sample).read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda sample: sample.name)
def test_the_committed_sample_is_what_the_generator_writes(sample: Sample) -> None:
    assert sample_path(sample).exists(), REWRITE
    assert sample_path(sample).read_text(encoding="utf-8") == rendered(sample), REWRITE


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda sample: sample.name)
def test_the_committed_sample_verifies_at_its_own_time_and_parses(sample: Sample) -> None:
    event = committed(sample)

    verify(sample, event, SIGNED_AT)
    events = sample.sender.parse(raw_body(event), event["headers"])
    assert events
    assert any(isinstance(item, DeliveryEvent | SubscriptionEvent) for item in events)


@pytest.mark.parametrize(
    "sample",
    [sample for sample in SAMPLES if not sample.name.startswith(("postmark", "paystack"))],
    ids=lambda s: s.name,
)
def test_a_timestamped_sample_is_refused_once_its_window_has_passed(sample: Sample) -> None:
    with pytest.raises(InvalidSignature, match="more than 300 seconds old"):
        verify(sample, committed(sample), SIGNED_AT + TOLERANCE_SECONDS + 1)


def test_every_sample_file_has_a_generator_entry() -> None:
    on_disk = {path.name for path in sample_path(SAMPLES[0]).parent.glob("*.json")}

    assert on_disk == {sample_path(sample).name for sample in SAMPLES}
