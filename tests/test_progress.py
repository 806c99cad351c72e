"""Progress on stderr (python/aqmlab/progress.py): a bar on a terminal, plain lines at a
modest rate in a log."""

import io

from aqmlab import progress
from aqmlab.run import progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def lines_of(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def plain(stream, delay=0.0) -> progress.Progress:
    return progress.Progress(
        "sweep", 10, list, lambda done, total, wall, f: f"{done:g} of {total:g}, {f['failed']} failed",
        delay=delay, stream=stream,
    )


def test_a_log_gets_the_first_line_and_the_last(monkeypatch):
    log = io.StringIO()
    p = plain(log)
    for k in range(1, 11):
        p.update(k, failed=0)
    p.close()
    # Ten updates within the interval: the first, then the last figures at the end.
    assert lines_of(log) == ["sweep: 1 of 10, 0 failed", "sweep: 10 of 10, 0 failed"]


def test_a_log_gets_a_line_per_interval(monkeypatch):
    clock = iter(range(0, 1000, 20))  # each call 20 s later
    monkeypatch.setattr(progress.time, "monotonic", lambda: float(next(clock)))
    log = io.StringIO()
    p = plain(log)
    for k in range(1, 7):
        p.update(k, failed=k // 3)
    p.close()
    # Lines at least 30 s apart: updates at 20, 60, 100 s (of 20, 40, ..., 120 s), then
    # the close writes the last figures, not yet shown.
    assert lines_of(log) == [
        "sweep: 1 of 10, 0 failed", "sweep: 3 of 10, 1 failed", "sweep: 5 of 10, 1 failed", "sweep: 6 of 10, 2 failed",
    ]


def test_nothing_is_shown_before_the_delay():
    log = io.StringIO()
    p = plain(log, delay=3600)
    p.update(5, failed=0)
    p.close()
    assert log.getvalue() == ""


def test_a_terminal_gets_a_bar_not_lines():
    term = Terminal()
    bar = progress_bar(10.0)
    bar.delay, bar.stream = 0.0, term
    bar.update(5.0)
    assert bar._bar is not None
    bar.close()
    assert bar._bar is None
    assert "5.0/10.0 s simulated" in term.getvalue()  # the bar's own column
    assert "simulating: " not in term.getvalue()  # no plain line


def test_elapsed():
    assert progress.elapsed(75) == "1:15"
    assert progress.elapsed(3725) == "1:02:05"
