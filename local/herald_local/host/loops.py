"""A daemon thread that runs a loop until asked to stop: the pollers and alarm players of the stack."""

from __future__ import annotations

import threading


class BackgroundLoop:
    """Runs ``_run`` on a daemon thread; ``_run`` returns once ``_stop`` is set."""

    def __init__(self, name: str, join_seconds: float) -> None:
        self._stop = threading.Event()
        self._join_seconds = join_seconds
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def request_stop(self) -> None:
        """Lets every loop stop at once; ``stop`` then only waits."""
        self._stop.set()

    def stop(self) -> None:
        self.request_stop()
        self._thread.join(self._join_seconds)

    def _run(self) -> None:
        raise NotImplementedError
