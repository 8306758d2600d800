"""`iolab check`'s tolerances: the largest regression allowed in a figure's bad direction (the
`--max-regression` default, a figure's own from the tolerances file's [tolerances] table) and a
figure's declared run-to-run spread ([spread]), which stands for repeats where there are none
(automation/noise.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from iolab.api import registry
from iolab.core.errors import IolabError
from iolab.core.percentages import refuse_fraction_like
from iolab.core.safefile import loads_toml, read_text
from iolab.core.units import ASCII_NUMBER, ascii_number

TABLES = ("tolerances", "spread")


def parse_pct(text: str | float | int, where: str) -> float:
    """'5%', '5 %' or 5 (percent) -> 0.05; digits are ASCII ones (units.ascii_number). From above 0
    to 1 only with its % (percentages.refuse_fraction_like: 0.05 could as well mean 5 %)."""
    refuse_fraction_like(where, str(text))
    v = text if isinstance(text, (int, float)) else ascii_number(str(text).strip().removesuffix("%"))
    if v is None:
        raise IolabError(f"{where}: {text!r} is not a percentage: give a plain number ({ASCII_NUMBER}), e.g. 5%.")
    if not 0 <= v < 1000 or v != v:
        raise IolabError(f"{where}: {text!r} is out of range (0% to 999%).")
    return v / 100


@dataclass(frozen=True)
class Tolerances:
    """The largest regression allowed, in the figure's bad direction (fractions), and the
    declared run-to-run spreads (standard deviation of one run's figure, fraction of its value)."""

    default: float
    per_figure: dict[str, float] = field(default_factory=dict)
    source: str = ""  # the TOML file the overrides came from
    spread: dict[str, float] = field(default_factory=dict)

    def of(self, name: str) -> float:
        return self.per_figure.get(name, self.default)

    def named(self) -> set[str]:
        return set(self.per_figure) | set(self.spread)


def load_tolerances(default: float, path: Path | None) -> Tolerances:
    """A TOML file: `[tolerances]` with one `"FIGURE NAME" = "10%"` line per figure, and
    `[spread]` with a figure's run-to-run standard deviation, `"FIGURE NAME" = "4%"`."""
    if path is None:
        return Tolerances(default)
    try:
        data = loads_toml(read_text(path, "tolerances file", "config"), str(path))
    except OSError as e:
        raise IolabError(f"{path}: cannot read the tolerances file ({e.strerror}).") from None
    unknown = sorted(set(data) - set(TABLES))
    if unknown or not data or not all(isinstance(data.get(t, {}), dict) for t in TABLES):
        raise IolabError(
            f'{path}: expected a [tolerances] table of "FIGURE NAME" = "N%" lines (and optionally a [spread] '
            f"table of the same form); found {', '.join(unknown) or 'no table, or a value instead of a table'}."
        )
    # a figure named as it was before its test renamed it is today's figure (TestDef.renamed_figures)
    tables = {
        t: {registry.current_figure(str(k)): parse_pct(v, f"{path}: [{t}] {k!r}") for k, v in data.get(t, {}).items()}
        for t in TABLES
    }
    return Tolerances(default, tables["tolerances"], str(path), tables["spread"])
