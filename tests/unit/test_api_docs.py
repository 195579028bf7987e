"""docs/api.md against the code it describes: its error code table is the one error table."""

from __future__ import annotations

from herald.domain.errors import ErrorCode
from herald.http.error_table import STATUS
from tests.support.api_docs import documented_statuses


def test_the_guide_lists_every_error_code_with_the_status_the_api_answers() -> None:
    assert documented_statuses() == {code.value: status for code, status in STATUS.items()}
    assert set(STATUS) == set(ErrorCode)
