"""Figures of one sequence that bound each other: a test's figure that claims the most of a
workload's rate a device gives (the max-IOPS search's result) below another test's measured rate
of the same workload on the same device (the demand test's highest sustained step).

Both were measured, so neither is wrong as a measurement; but the summary page that prints them
side by side would let "max read IOPS 7,800" stand beside a sustained 44,767 on one drive. A
search that stops at the first step gaining less than its threshold ends early on a noisy
target, and a drive's state moves between tests (writes above all): the page says which
figures disagree and how the maximum's search may have stopped short, and prints both."""

from __future__ import annotations

from dataclasses import dataclass

from iolab.core.units import num

# Two tests' figures of one rate differ by this much before they are said to disagree: rounds of
# one workload on a real drive spread by a few percent (the PTS steady window allows ±10 % of
# its mean), and a sustained step is one cell.
MARGIN = 0.10


@dataclass(frozen=True)
class Figure:
    """One key figure of one run, as the sequence summary has it."""

    device: str  # which device of the sequence ("D1"; one device: "")
    test: str  # the test's label
    name: str
    unit: str
    value: float | None
    rate_of: str  # the workload whose rate it is ("" for none)
    maximum: str  # how its search may stop short ("" when it claims no maximum)


@dataclass(frozen=True)
class Disagreement:
    most: Figure  # the figure that claims the most of the rate
    more: Figure  # another test's measured figure of that rate, above it
    ratio: float  # more's value over most's

    @property
    def text(self) -> str:
        on = f" on {self.most.device}" if self.most.device else ""
        return (
            f"{self.most.test}'s {self.most.name} {num(self.most.value)} {self.most.unit} is below the "
            f"{num(self.more.value)} {self.more.unit} of {self.more.test}'s {self.more.name}{on} "
            f"({self.ratio:.2f}x; both {self.most.rate_of}): {self.why}"
        )

    @property
    def why(self) -> str:
        return f"{self.most.maximum}; or the drive's state changed between the tests"

    @property
    def short(self) -> str:
        return f"{self.most.test} {self.most.rate_of} below {self.more.test}'s"


def disagreements(figures: list[Figure], margin: float = MARGIN) -> list[Disagreement]:
    """Each figure claiming a maximum with another test's figure of its rate on its device more
    than `margin` above it (the highest such figure)."""
    found = []
    for most in figures:
        if not (most.maximum and most.rate_of and most.value):
            continue
        rates = [(f.value, f) for f in figures if f.test != most.test and f.device == most.device]
        above = [
            (v, f) for v, f in rates if f.rate_of == most.rate_of and v is not None and v > most.value * (1 + margin)
        ]
        if above:
            v, more = max(above, key=lambda vf: vf[0])
            found.append(Disagreement(most, more, v / most.value))
    return found
