"""SnapStart's runtime hooks, called as Lambda calls them around a snapshot: nothing secret, connected
or drawn at random is shared by the environments restored from one snapshot."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
import snapshot_restore_py

from herald import INITIALIZATION_TYPE
from herald.composition import common, snapstart

# What the runtime's registries hold: (function, args, kwargs) for each registered hook.
Hooks = list[tuple[Any, tuple[Any, ...], dict[str, Any]]]


@pytest.fixture
def registry() -> Iterator[tuple[Hooks, Hooks]]:
    """The hooks as the runtime reads them (its registries, emptied around each test)."""
    before, after = snapshot_restore_py.get_before_snapshot(), snapshot_restore_py.get_after_restore()
    before.clear()
    after.clear()
    yield before, after
    before.clear()
    after.clear()
    common.reset()


def run(hooks: Hooks) -> None:
    """As the runtime runs them: each registered function with its arguments."""
    for func, args, kwargs in hooks:
        func(*args, **kwargs)


class Built:
    """Stands for what a function's services hold: clients and their connections, data keys."""


def test_the_hooks_are_registered_only_when_lambda_initialises_for_a_snapshot(
    registry: tuple[Hooks, Hooks], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(INITIALIZATION_TYPE, raising=False)
    snapstart.register()
    assert not any(registry)

    monkeypatch.setenv(INITIALIZATION_TYPE, "snap-start")
    snapstart.register()
    before, after = registry
    assert [hook[0] for hook in before] == [snapstart.before_snapshot]
    assert [hook[0] for hook in after] == [snapstart.after_restore]


def test_nothing_built_before_the_snapshot_is_in_it_and_a_restored_copy_builds_anew(
    registry: tuple[Hooks, Hooks], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(INITIALIZATION_TYPE, "snap-start")
    snapstart.register()
    during_init = common.once(Built)

    run(registry[0])
    in_snapshot = common.once(Built)
    run(registry[1])
    restored = common.once(Built)

    assert in_snapshot is not during_init
    assert restored is not in_snapshot
    assert common.once(Built) is restored  # then warm again, as usual


def test_restored_copies_do_not_repeat_one_random_sequence(
    registry: tuple[Hooks, Hooks], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two environments restored from one snapshot start from the same ``random`` state; the hook
    re-seeds it, so their retry jitter differs."""
    monkeypatch.setenv(INITIALIZATION_TYPE, "snap-start")
    snapstart.register()
    random.seed(7)
    snapshot_state = random.getstate()
    without_hook = [random.random() for _ in range(4)]

    copies = []
    for _ in range(2):
        random.setstate(snapshot_state)
        run(registry[1])
        copies.append([random.random() for _ in range(4)])

    assert copies[0] != without_hook
    assert copies[1] != without_hook
    assert copies[0] != copies[1]
