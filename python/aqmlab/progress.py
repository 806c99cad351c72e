"""Progress on stderr, for a run (simulated seconds) and a sweep (runs done).

On a terminal it is a rich bar, redrawn in place and gone when the work ends. Without
one (a batch job's or SLURM's log, a pipe) a bar would be control characters; the
same figures are then written as plain lines, one every ``LINE_INTERVAL_S`` seconds
at most, and a last one at the end, so that a log shows the work moving without
filling up.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable

#: The least time between two plain progress lines.
LINE_INTERVAL_S = 30.0


class Progress:
    """Progress towards ``total``: ``update(done, **fields)``, then ``close()``.

    ``columns`` builds the rich bar's columns (imported on first use); ``line`` formats a
    plain line from (done, total, elapsed seconds, fields). ``delay``: seconds of work
    before anything is shown (short work stays quiet). ``console``: a
    ``rich.console.Console`` to draw on, which means a bar whatever the stream.
    """

    def __init__(
        self,
        label: str,
        total: float,
        columns: Callable[[], list[Any]],
        line: Callable[[float, float, float, dict[str, Any]], str],
        delay: float = 0.0,
        console: Any = None,
        stream: Any = None,
    ) -> None:
        self.label, self.total, self.columns, self.line = label, total, columns, line
        self.delay, self.console = delay, console
        self.stream = stream if stream is not None else sys.stderr
        self.started = time.monotonic()
        self._bar: Any = None
        self._task: Any = None
        self._last_line: float | None = None
        self._unwritten: tuple[float, dict[str, Any]] | None = None

    def _on_terminal(self) -> bool:
        return self.console is not None or bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, done: float, **fields: Any) -> None:
        now = time.monotonic()
        if now - self.started < self.delay:
            return
        done = min(float(done), self.total)
        if self._on_terminal():
            self._draw(done, fields)
            return
        self._unwritten = (done, fields)
        if self._last_line is None or now - self._last_line >= LINE_INTERVAL_S:
            self._write(done, fields, now)

    def _draw(self, done: float, fields: dict[str, Any]) -> None:
        if self._bar is None:
            from rich.console import Console
            from rich.progress import Progress as Bar

            console = self.console if self.console is not None else Console(file=self.stream)
            self._bar = Bar(*self.columns(), console=console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total, **fields)
        self._bar.update(self._task, completed=done, **fields)

    def _write(self, done: float, fields: dict[str, Any], now: float) -> None:
        self._last_line, self._unwritten = now, None
        text = self.line(done, self.total, now - self.started, fields)
        self.stream.write(f"{self.label}: {text}\n")
        self.stream.flush()

    def close(self) -> None:
        """End the bar, or write the last figures if no line has shown them."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self._unwritten is not None:
            self._write(*self._unwritten, time.monotonic())


def elapsed(seconds: float) -> str:
    """``75`` -> ``"1:15"``; ``3725`` -> ``"1:02:05"``."""
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02}:{s:02}" if h else f"{m}:{s:02}"
