"""One email's walk through Herald's own code: the modules a warm ``POST /notifications/email``
passes through, and the worker's from the queued message up to the provider's HTTP call.

Followed with ``sys.setprofile`` in this process, against moto resources from template.yaml (the
harness's real handlers): every call of a function defined in Herald's code (the ``herald`` package
and the functions' handler modules) is attributed to its module. Counted:
- ``modules``: the distinct modules whose functions ran;
- ``transfers``: each time control crosses from one Herald module into another, by a call or by
  the return that comes back (the caller is the nearest Herald frame below the callee: a library
  in between does not hide it);
- ``re-entries``: transfers into a module the walk had already been in (every return is one).
A warm-up request first, so imports and services built on first use are not counted: the walk is
what every request repeats.

``python -m bench.walk`` prints the figures; docs/architecture.md gives them with the shapes.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from herald_harness.in_moto import HeraldInMoto, herald_in_moto
from herald_harness.patches import patched

EMAIL_QUEUE = "EmailNormalQueueUrl"
# The worker's walk ends where the provider's HTTP request begins.
PROVIDER_CALL = ("requests.sessions", "request")


def _herald_module(frame: FrameType) -> str | None:
    name = str(frame.f_globals.get("__name__", ""))
    if name == "herald" or name.startswith("herald.") or name.endswith("_app"):
        return name
    return None


@dataclass
class Walk:
    modules: list[str] = field(default_factory=list)
    transfers: int = 0
    reentries: int = 0
    stopped: bool = False

    def called(self, frame: FrameType) -> None:
        if self.stopped:
            return
        module = _herald_module(frame)
        if module is None:
            if (frame.f_globals.get("__name__"), frame.f_code.co_name) == PROVIDER_CALL:
                self.stopped = True
            return
        caller = _caller_module(frame)
        if caller is not None and caller != module:
            self.transfers += 1
            self.reentries += module in self.modules
        if module not in self.modules:
            self.modules.append(module)

    def returned(self, frame: FrameType) -> None:
        module = _herald_module(frame)
        if self.stopped or module is None:
            return
        caller = _caller_module(frame)
        if caller is not None and caller != module:
            self.transfers += 1
            self.reentries += 1

    def figures(self) -> dict[str, Any]:
        return {"modules": len(self.modules), "transfers": self.transfers, "reentries": self.reentries}


def _caller_module(frame: FrameType) -> str | None:
    below = frame.f_back
    while below is not None:
        module = _herald_module(below)
        if module is not None:
            return module
        below = below.f_back
    return None


@contextmanager
def walking() -> Iterator[Walk]:
    walk = Walk()

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call":
            walk.called(frame)
        elif event == "return":
            walk.returned(frame)

    sys.setprofile(profile)
    try:
        yield walk
    finally:
        sys.setprofile(None)


def _email() -> dict[str, str]:
    return {"to": f"walk+{uuid.uuid4().hex}@example.com", "subject": "Your order", "body": "<p>Shipped.</p>"}


def _accept(herald: HeraldInMoto, key: str) -> None:
    answer = herald.api("POST", "/api/v1/notifications/email", _email(), key=key)
    assert answer.status == 202, answer.text


def _deliver_one(herald: HeraldInMoto) -> None:
    records = herald.receive_records(EMAIL_QUEUE, max_messages=1)
    assert records, "no queued email"
    herald.handle_batch(EMAIL_QUEUE, records)


def measure(herald: HeraldInMoto) -> dict[str, dict[str, Any]]:
    """Each function warmed up by a first message of its own, in its own environment (switching
    environments starts a function cold)."""
    key = herald.new_key()
    herald.drain_queues()
    _accept(herald, key)
    with walking() as accept:
        _accept(herald, key)
    herald.use_function_environment(herald.event_source(EMAIL_QUEUE).function)
    _deliver_one(herald)
    with walking() as deliver:
        _deliver_one(herald)
    both = sorted({*accept.modules, *deliver.modules})
    return {
        "accept": {**accept.figures(), "path": accept.modules},
        "deliver": {**deliver.figures(), "path": deliver.modules, "reached_provider": deliver.stopped},
        "together": {"modules": len(both)},
    }


def run(report: Callable[[str], None] = print) -> dict[str, dict[str, Any]]:
    with patched() as patches, herald_in_moto(patches) as herald:
        figures = measure(herald)
    for part in ("accept", "deliver"):
        line = figures[part]
        report(
            f"{part}: {line['modules']} modules, {line['transfers']} transfers, {line['reentries']} re-entries"
        )
        report("  " + " > ".join(name.removeprefix("herald.") for name in line["path"]))
    report(f"both: {figures['together']['modules']} modules")
    return figures


if __name__ == "__main__":
    run()
