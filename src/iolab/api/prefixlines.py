"""The lines of runs going side by side (several --target), each printed prefixed with its
target, fitted to the terminal they are printed on."""

from __future__ import annotations

import textwrap


class PrefixedLines:
    """Each line of run `i` prefixed with "[its target] ". On a terminal `width` columns wide, a
    line is never wider: its tail is folded under the prefix (a progress line of 300 characters
    behind a 40-character prefix ran off an 80-column terminal, which wrapped it under the other
    run's lines). Targets whose prefix would take more than a quarter of the width are named by
    number instead, with a legend (`legend`): "[1] " leaves a line room to be read, and a run
    directory's path room to stay whole. Written to a file or
    a pipe (`width` None) a line is kept whole, as every table is (grep finds it)."""

    def __init__(self, specs: list[str], width: int | None):
        self.width = width
        self.specs = specs
        self.numbered = bool(width) and max(len(s) + 3 for s in specs) > width // 4  # type: ignore[operator]
        self.tags = [f"[{i}] " for i in range(1, len(specs) + 1)] if self.numbered else [f"[{s}] " for s in specs]

    @property
    def room(self) -> int | None:
        """The width left for a line's text beside the longest prefix (None: no limit)."""
        return max(self.width - max(len(t) for t in self.tags), 1) if self.width else None

    def legend(self) -> list[str]:
        """Which target each number is (nothing when the prefixes are the targets)."""
        return [out for i, s in enumerate(self.specs) if self.numbered for out in self.lines(i, f"is --target {s}")]

    def lines(self, i: int, line: str) -> list[str]:
        """Run `i`'s `line` as printed: one line, or on a terminal the line folded to its width."""
        tag = self.tags[i]
        if not self.width:
            return [tag + line]
        room = max(self.width - len(tag), 1)
        parts = textwrap.wrap(line, room, break_on_hyphens=False, tabsize=8) or [""]
        return [tag + parts[0], *(" " * len(tag) + p for p in parts[1:])]
