"""The shared count of job alerts per window: one small item per window (``ALERTS#<start> / ALERTS``).

1 UpdateItem per dead-lettered job (ADD, no condition: 1 write unit), returning the new count; the
item expires a day after its window.
"""

from __future__ import annotations

from herald.adapters.store.models import ALERTS_SK, AlertCounterItem, alerts_pk
from herald.adapters.store.table import Table, translated
from herald.domain.alerts import AlertWindow


class DynamoAlertCounter:
    def __init__(self, table: Table) -> None:
        self._table = table

    def count(self, window: AlertWindow) -> int:
        item = self._table[AlertCounterItem](alerts_pk(window.key), ALERTS_SK)
        with translated("alert counter write"):
            item.update(
                actions=[
                    AlertCounterItem.kind.set(AlertCounterItem.kind | AlertCounterItem),
                    AlertCounterItem.sent.add(1),
                    AlertCounterItem.expires_at.set(window.expires_at),
                ]
            )
        return int(item.sent)
