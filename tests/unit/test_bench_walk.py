"""The walk's counting (bench.walk): modules entered, boundary crossings both ways, re-entries."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from bench.walk import walking


def module(name: str, source: str, **names: Any) -> ModuleType:
    made = ModuleType(name)
    made.__dict__.update(names)
    exec(source, made.__dict__)  # noqa: S102 - the test's own two-line modules
    return made


def test_a_call_and_its_return_are_two_transfers_and_a_second_visit_re_enters() -> None:
    store = module("herald.adapters.fake_store", "def put(x):\n    return x\n")
    service = module(
        "herald.services.fake_service",
        "def accept(x):\n    helper(x)\n    store.put(x)\n    return store.put(x)\n\ndef helper(x):\n    return x\n",
        store=store,
    )
    outside = module("not_herald", "def call(f, x):\n    return f(x)\n")

    with walking() as walk:
        outside.call(service.accept, 1)

    assert walk.modules == ["herald.services.fake_service", "herald.adapters.fake_store"]
    # accept -> put, back, accept -> put again, back: four crossings; all but the first re-enter.
    # helper stays inside its module; the library's frame below accept is no Herald caller.
    assert (walk.transfers, walk.reentries) == (4, 3)
