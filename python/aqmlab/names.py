"""Names in index order, stored as runs: the contract's ``NameRun``
(``crates/sim/src/scenario.rs``).

A dumbbell of a million senders has four million node and link names, nearly all a
template and a number ("access_s41_rev"). As Python strings they took more memory than
the simulator's whole network; here a run of them is its templates and a range of
numbers, and a name is written out only when it is asked for.
"""

from __future__ import annotations

import bisect
from typing import Any, Iterator

#: Where a numbered name takes its number.
HOLE = "{}"


class NameList:
    """Names by index: runs of plain names, and runs of templates repeated for each
    number of a range (all templates of one number, then the next number's)."""

    def __init__(self) -> None:
        #: (names, (first, count) or None), as the contract has them
        self.runs: list[tuple[list[str], tuple[int, int] | None]] = []
        self._starts: list[int] = []  # index of each run's first name
        self._len = 0
        self._plain: dict[str, int] = {}

    def __len__(self) -> int:
        return self._len

    def _new_run(self, names: list[str], numbers: tuple[int, int] | None) -> None:
        self.runs.append((names, numbers))
        self._starts.append(self._len)

    def add(self, name: str) -> int:
        """Append a plain name; returns its index."""
        if not self.runs or self.runs[-1][1] is not None:
            self._new_run([], None)
        self.runs[-1][0].append(name)
        self._plain.setdefault(name, self._len)
        self._len += 1
        return self._len - 1

    def add_numbered(self, templates: list[str], count: int, first: int = 0) -> int:
        """Append ``templates`` (each with a ``{}``) for each number of
        ``first..first+count``; returns the index of the first name."""
        start = self._len
        if count:
            self._new_run(list(templates), (first, count))
            self._len += len(templates) * count
        return start

    def __getitem__(self, i: int) -> str:
        if not 0 <= i < self._len:
            raise IndexError(i)
        r = bisect.bisect_right(self._starts, i) - 1
        names, numbers = self.runs[r]
        offset = i - self._starts[r]
        if numbers is None:
            return names[offset]
        n, k = divmod(offset, len(names))
        return names[k].replace(HOLE, str(numbers[0] + n), 1)

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(self._len))

    def index(self, name: str) -> int | None:
        """The index of ``name`` (its first, if it is there more than once), or None."""
        if name in self._plain:
            return self._plain[name]
        for start, (names, numbers) in zip(self._starts, self.runs):
            if numbers is None:
                continue
            first, count = numbers
            for k, template in enumerate(names):
                before, _, after = template.partition(HOLE)
                if len(name) <= len(before) + len(after) or not (name.startswith(before) and name.endswith(after)):
                    continue
                digits = name[len(before) : len(name) - len(after)]
                if not (digits.isascii() and digits.isdigit()) or (digits[0] == "0" and digits != "0"):
                    continue
                n = int(digits)
                if first <= n < first + count:
                    return start + (n - first) * len(names) + k
        return None

    def to_contract(self) -> list[dict[str, Any]]:
        return [
            {"names": list(names)} if numbers is None else {"names": list(names), "numbers": list(numbers)}
            for names, numbers in self.runs
        ]

    @classmethod
    def from_contract(cls, runs: list[dict[str, Any]]) -> "NameList":
        out = cls()
        for run in runs:
            if run.get("numbers") is None:
                for name in run["names"]:
                    out.add(name)
            else:
                first, count = run["numbers"]
                out.add_numbered(run["names"], count, first)
        return out
