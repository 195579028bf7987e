"""The harness's own patches of the process (herald_harness.patches), which the benchmarks use where
the tests pass pytest's monkeypatch: every change lasts as long as the block, and no longer."""

from __future__ import annotations

import os
import types

import pytest

from herald_harness.patches import patched


def test_every_change_is_undone_when_the_block_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERALD_TEST_KEPT", "before")
    monkeypatch.setenv("HERALD_TEST_REMOVED", "before")
    monkeypatch.delenv("HERALD_TEST_ADDED", raising=False)
    target = types.SimpleNamespace(answer=1)

    with patched() as patches:
        patches.setenv("HERALD_TEST_KEPT", "during")
        patches.setenv("HERALD_TEST_ADDED", "during")
        patches.delenv("HERALD_TEST_REMOVED")
        patches.setattr(target, "answer", 2)
        assert (os.environ["HERALD_TEST_KEPT"], os.environ["HERALD_TEST_ADDED"]) == ("during", "during")
        assert "HERALD_TEST_REMOVED" not in os.environ
        assert target.answer == 2

    assert os.environ["HERALD_TEST_KEPT"] == "before"
    assert os.environ["HERALD_TEST_REMOVED"] == "before"
    assert "HERALD_TEST_ADDED" not in os.environ
    assert target.answer == 1


def test_removing_a_variable_that_is_not_set_fails_unless_told_not_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HERALD_TEST_ABSENT", raising=False)

    with patched() as patches:
        patches.delenv("HERALD_TEST_ABSENT", raising=False)
        with pytest.raises(KeyError, match="HERALD_TEST_ABSENT"):
            patches.delenv("HERALD_TEST_ABSENT")


def _fail_patched(target: types.SimpleNamespace) -> None:
    with patched() as patches:
        patches.setattr(target, "answer", 2)
        raise RuntimeError("the benchmark failed")


def test_changes_are_undone_when_the_block_fails() -> None:
    target = types.SimpleNamespace(answer=1)

    with pytest.raises(RuntimeError, match="the benchmark failed"):
        _fail_patched(target)

    assert target.answer == 1
