"""IO consistency's steady-part verdict as a user meets it: judged by the run's own rule
(`--strict-steady` too), said in the report's plot captions as in its figures table, and given
with its numbers in --json (`steady_part`, declared in outcome_schema.py)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from iolab.api.runlist import list_runs

from ..schema_lite import errors
from .conftest import iolab

pytestmark = pytest.mark.integration

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/schema/outcome.schema.json").read_text())
# From 1 s into 30 s of writes the compressing entry drive's IOPS ramp: its piece means are 64 %
# apart, a part that is NOT steady (test_cli_characterise.py's run, with its report)
RAMP = ("sim:entry-sata-compress", "--set", "duration=30s", "--set", "steady_from=1s")


def consistency(tmp_path: Path, target: str, *extra: str) -> Path:
    runs = tmp_path / "runs"
    p = iolab("run", "consistency", "--target", target, "--quick", "--runs-dir", str(runs), *extra)
    assert p.returncode == 0, p.stderr + p.stdout[-3000:]
    [r] = list_runs(runs)
    return r.path


def part_of(run: Path) -> tuple[str, list[dict]]:
    """show's text (one line) and the --json figures that carry a steady part."""
    shown = " ".join(iolab("show", str(run)).stdout.split())
    doc = json.loads(iolab("show", str(run), "--json").stdout)
    assert errors(doc, SCHEMA) == []
    return shown, [f for f in doc["runs"][0]["figures"] if "steady_part" in f]


def captions(run: Path) -> list[str]:
    [page] = (run / "report").glob("*.html")
    found = re.findall(r'<div class="caption">([^<]*)</div>', page.read_text())
    return [html.unescape(c) for c in found]


def test_strict_steady_judges_the_steady_part_by_the_strict_rule(tmp_path):
    # the verdict used the default inclusive rule (≤) whatever the run was told: a run given
    # --strict-steady must be judged by < as its rounds are, and say so
    run = consistency(tmp_path, "sim:enterprise-sas", "--strict-steady", "--no-report")
    shown, figs = part_of(run)
    assert re.search(
        r"steady part \(from 15 s\): steady by the rule \(range \d+ % < 20 %, excursion \d+ % < 10 %", shown
    )
    assert "% ≤ 20 %" not in shown
    assert figs and all(f["steady_part"]["comparison"] == "strict" for f in figs)


def test_a_part_not_steady_is_not_captioned_as_steady(tmp_path):
    run = consistency(tmp_path, *RAMP)
    said = [c for c in captions(run) if "steady part" in c]
    # the scatter of the part and the figures table, each with the verdict the table gives
    assert "steady part (after 1 s), NOT shown steady, linear scale from 0" in said
    assert "steady part (after 1 s), NOT shown steady" in said
    assert all("NOT shown steady" in c for c in said), said
    # the scatter's own title, drawn in the plot, says it too
    [page] = (run / "report").glob("*.html")
    assert '"title":"steady part (after 1 s), NOT shown steady"' in html.unescape(page.read_text())


def test_json_gives_the_steady_parts_verdict_with_its_numbers(tmp_path):
    run = consistency(tmp_path, *RAMP, "--no-report")
    shown, figs = part_of(run)
    assert len(figs) == 2  # both steady-part figures
    part = figs[0]["steady_part"]
    assert figs[1]["steady_part"] == part
    assert part["steady"] is False and part["comparison"] == "inclusive" and part["from_s"] == 1
    assert (part["pieces"], part["piece_seconds"], part["seconds"]) == (5, 5, 29)
    assert (part["range_allowed_pct"], part["excursion_allowed_pct"]) == (pytest.approx(20), pytest.approx(10))
    assert part["range_pct"] > 20 and part["excursion_pct"] > 10
    # the numbers are the ones the note words
    note = (
        f"NOT steady by the rule (range {part['range_pct']:.0f} % > 20 %, excursion {part['excursion_pct']:.0f} % "
        f"> 10 %, of 5 pieces of 5 s)"
    )
    assert note in figs[0]["note"] and note in shown
