"""The bench's observers of the AWS calls a handler makes (see herald_local.aws.sdk_calls): how many
of each operation, and every call in order, to replay elsewhere."""

from __future__ import annotations

import copy
import threading
from collections import Counter
from typing import Any

from herald_local.aws.sdk_calls import Proceed, SdkCall


class CallCounter:
    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def __call__(self, call: SdkCall, proceed: Proceed) -> Any:
        with self._lock:
            self.calls[(call.service, call.operation)] += 1
        return proceed()


class CallRecorder:
    """Every call's service, operation and parameters, in order (to replay them elsewhere)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self, call: SdkCall, proceed: Proceed) -> Any:
        self.calls.append((call.service, call.operation, copy.deepcopy(call.params)))
        return proceed()
