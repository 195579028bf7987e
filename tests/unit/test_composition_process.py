"""The process registry of the composition roots: each thing built once per warm container, and one
reset that makes the next use a cold start."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from herald.composition import common


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    common.reset()
    yield
    common.reset()


class Built:
    made: list[str] = []

    def __init__(self, name: str = "default") -> None:
        self.name = name
        Built.made.append(name)


def test_a_thing_is_built_on_first_use_and_reused_after() -> None:
    Built.made = []

    first, second = common.once(Built), common.once(Built)

    assert first is second
    assert Built.made == ["default"]


def test_each_argument_builds_its_own() -> None:
    Built.made = []

    sendgrid, resend = common.once(Built, "sendgrid"), common.once(Built, "resend")

    assert (sendgrid.name, resend.name) == ("sendgrid", "resend")
    assert common.once(Built, "sendgrid") is sendgrid
    assert Built.made == ["sendgrid", "resend"]


def test_a_reset_forgets_everything_at_once() -> None:
    before = common.once(Built)

    common.reset()

    assert common.once(Built) is not before


def test_building_may_use_what_it_stands_on() -> None:
    def foundation() -> Built:
        return common.once(Built, "foundation")

    def services() -> tuple[Built, Built]:
        return foundation(), Built("services")

    built = common.once(services)

    assert built[0] is foundation()
    assert common.once(services) is built
