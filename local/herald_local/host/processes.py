"""Child processes of the local stack: started in their own session, their output logged with their
name in front (see console), stopped in order (terminate, then kill after a bounded wait).

Children do not share the terminal's process group, so Ctrl-C reaches only the parent, which then
stops every child itself, in order, instead of each child dying mid-request with a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO

from herald_local.host.console import child_line

# Sees each output line first; returning True swallows the line (a handshake, a noisy access log).
LineFilter = Callable[[str], bool]


class ChildProcess:
    def __init__(
        self,
        label: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        line_filter: LineFilter | None = None,
        pass_fds: Sequence[int] = (),
    ) -> None:
        self.label = label
        self._argv = list(argv)
        self._env = dict(env) if env is not None else None
        self._line_filter = line_filter
        self._pass_fds = tuple(pass_fds)  # inherited by the child (a listening socket it serves on)
        self._process: subprocess.Popen[str] | None = None
        self._pump_thread: threading.Thread | None = None

    def start(self) -> None:
        self._process = subprocess.Popen(
            self._argv,
            env=self._env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            # One stream, as Lambda keeps one log stream: lines stay in the order they were written.
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
            pass_fds=self._pass_fds,
        )
        assert self._process.stdout is not None
        self._pump_thread = threading.Thread(
            target=self._pump, args=(self._process.stdout,), name=f"{self.label}-output", daemon=True
        )
        self._pump_thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            if self._line_filter is not None and self._line_filter(line):
                continue
            child_line(self.label, line)

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def exit_code(self) -> int | None:
        """None while running (or never started)."""
        return None if self._process is None else self._process.poll()

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def terminate(self) -> None:
        """Asks the child to stop without waiting, so several children stop in parallel."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()

    def stop(self, timeout: float = 5.0) -> None:
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout)
        if self._pump_thread is not None:
            self._pump_thread.join(timeout)


def python_module(module: str, *arguments: str) -> list[str]:
    """The command running ``module`` with this very interpreter (the project's venv)."""
    return [sys.executable, "-m", module, *arguments]


def watch_parent(check_seconds: float = 1.0) -> None:
    """Ends this child process when its parent is gone, so a killed stack leaves no orphans."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(check_seconds)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
