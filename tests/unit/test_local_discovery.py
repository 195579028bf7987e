"""How the operator CLI and ``make invoke`` find a local stack started with another state folder:
``--local-dir`` or HERALD_LOCAL_DIR, and an error that names both when there is none."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from herald_cli.main import main as herald
from herald_local.invoke import main as invoke


def _refusal(capsys: pytest.CaptureFixture[str], status: int) -> str:
    assert status == 2
    return capsys.readouterr().err


def test_given_no_stack_in_the_folder_named_then_the_cli_says_how_to_name_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = _refusal(capsys, herald(["--local-dir", str(tmp_path), "tenant", "list"]))

    assert f"no local stack is running with its state in {tmp_path.resolve()}" in error
    assert "pass --local-dir DIR or set HERALD_LOCAL_DIR=DIR" in error
    assert "--stack NAME" in error


def test_given_no_stack_in_herald_local_dir_then_make_invoke_says_how_to_name_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERALD_LOCAL_DIR", str(tmp_path))

    error = _refusal(capsys, invoke(["ApiFunction", "events/api/ping.json"]))

    assert f"state in {tmp_path.resolve()}" in error
    assert "pass --local-dir DIR or set HERALD_LOCAL_DIR=DIR" in error


def test_given_a_stale_state_file_then_the_error_says_so_and_how_to_name_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "stack.json").write_text('{"pid": 0}')

    error = _refusal(capsys, invoke(["ApiFunction", "events/api/ping.json", "--local-dir", str(tmp_path)]))

    assert "is no longer running" in error
    assert "--local-dir DIR or set HERALD_LOCAL_DIR=DIR" in error


@pytest.mark.parametrize("main", [herald, invoke])
def test_the_help_explains_the_local_dir_option(
    main: Callable[[list[str]], int], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])

    help_text = " ".join(capsys.readouterr().out.split())
    assert "--local-dir DIR state folder of the running local stack" in help_text
    assert "(default: $HERALD_LOCAL_DIR, else .herald-local in the repository)" in help_text
