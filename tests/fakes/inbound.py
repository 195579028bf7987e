"""In-memory dedupe marks and payment processors' links, with the adapters' conditions.

Name a method in ``unavailable`` to make it raise ``DependencyError`` as the adapter does when
DynamoDB cannot be reached; ``calls`` lists the round trips made, in order.
"""

from __future__ import annotations

from collections.abc import Sequence

from herald.domain.inbound import Processor
from tests.fakes.jobs import Recorder


class FakeLedger(Recorder):
    def __init__(self) -> None:
        super().__init__()
        self.marks: dict[str, int | None] = {}

    def mark(self, key: str, expires_at: int | None) -> bool:
        self._called("mark")
        if key in self.marks:
            return False
        self.marks[key] = expires_at
        return True

    def unmark(self, key: str) -> None:
        self._called("unmark")
        self.marks.pop(key, None)


class FakeBillingLinks(Recorder):
    def __init__(self) -> None:
        super().__init__()
        self.links: dict[tuple[Processor, str], str] = {}

    def tenant_for(self, processor: Processor, ref: str) -> str | None:
        self._called("tenant_for")
        return self.links.get((processor, ref))

    def link(self, processor: Processor, refs: Sequence[str], tenant_id: str) -> None:
        self._called("link")
        for ref in refs:
            self.links[(processor, ref)] = tenant_id
