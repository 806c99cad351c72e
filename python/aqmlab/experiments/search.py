"""The minimum buffer for a utilization target, by bisection (digest 003 section 7.18).

The thesis "iteratively found the minimum amount of buffering" (Figs 3.4, 5.2) without
saying how. Here: bisection over an integer buffer, the utilization of a buffer being
its mean over several seeds. Many searches (one per number of flows and target) advance
together, a round at a time, so that each round's runs go to the executor as one
batch. Searches of the same ``group`` (the same number of flows) share what they
learn: a buffer measured for the 99% target also narrows the 98% and 99.9% searches.

Bisection assumes utilization grows with the buffer. It does on average; a noisy
measurement can break that locally, which is why the utilization is averaged over
seeds, and why the result is reported with the bracket ``(lo, hi]`` it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable


@dataclass
class Search:
    """The smallest buffer ``hi`` with utilization >= ``target``; ``lo`` is the largest
    known to fall short (0: none yet). Done when ``hi - lo <= max(1, precision * hi)``."""

    group: Hashable  #: searches of one group share measurements (e.g. the number of flows)
    target: float
    hi: int  #: the first guess; doubled (up to ``cap``) until it meets the target
    cap: int
    precision: float = 0.0
    lo: int = 0
    confirmed: bool = False  #: ``hi`` is known to meet the target
    censored: bool = False  #: even ``cap`` falls short

    @property
    def done(self) -> bool:
        return self.censored or (self.confirmed and self.hi - self.lo <= max(1, self.precision * self.hi))

    def next_buffer(self) -> int:
        return self.hi if not self.confirmed else (self.lo + self.hi) // 2

    def learn(self, known: dict[int, float]) -> None:
        """Narrow the bracket with every measurement of this group inside it."""
        for b in sorted(known):
            if b <= self.lo or (self.confirmed and b >= self.hi):
                continue
            if known[b] >= self.target:
                if b <= self.hi:
                    self.hi, self.confirmed = b, True
                    return
            elif b >= self.hi:  # the guess falls short: double it
                self.lo = b
                if b >= self.cap:
                    self.censored = True
                    return
                self.hi = min(2 * b, self.cap)
            else:
                self.lo = b


@dataclass
class Measurements:
    """Utilization by group and buffer, filled a round at a time."""

    known: dict[Hashable, dict[int, float]] = field(default_factory=dict)
    rounds: int = 0


def bisect(
    searches: list[Search],
    utilization: Callable[[list[tuple[Hashable, int]]], list[float]],
    measurements: Measurements | None = None,
) -> Measurements:
    """Run every search to the end. ``utilization(points)`` measures a list of
    ``(group, buffer)`` points (one batch) and returns their utilizations."""
    m = measurements or Measurements()
    while True:
        for s in searches:
            s.learn(m.known.get(s.group, {}))
        wanted = sorted(
            {(s.group, s.next_buffer()) for s in searches if not s.done} - {(g, b) for g, bs in m.known.items() for b in bs},
            key=repr,
        )
        if not wanted:
            return m
        for point, u in zip(wanted, utilization(wanted)):
            m.known.setdefault(point[0], {})[point[1]] = u
        m.rounds += 1


def search_table_rows(searches: list[Search]) -> list[dict[str, Any]]:
    """One row per search: the minimum buffer and the bracket it came from."""
    return [
        {
            "group": s.group,
            "target": s.target,
            "min_buffer": None if s.censored else s.hi,
            "bracket_low": s.lo,
            "censored": s.censored,
        }
        for s in searches
    ]
