"""The page header's four columns measured on the PDF's own layout (pdflayout.py, which wraps
each cell's text into the lines it prints): every row header.fit_column keeps lies inside its
column's box, none is cut off below it, and what it leaves out is named by a row that says
where it is printed in full."""

from __future__ import annotations

import random

import pytest

from iolab.pages.report.header import MIN_SCALE, RUN_DETAILS, fit_column
from iolab.pages.report.model import Document, Page, Text
from iolab.pages.report.pdflayout import lay_out

# The Test Parameters column of a quick DIRTH run on the simulated drive: its last six rows
# (from pc_round_time on) were laid out below the column's box and cut off.
DIRTH = [
    ("Profile", "enterprise (WCD)"),
    ("Cell duration", "1 s"),
    ("Stimulus", "RND 8KiB, R/W 65/35"),
    (
        "Demand points",
        "TC 32, 16, 8, 6, 4, 2, 1 × QD 32, 16, 8, 6, 4, 2, 1 (high → low): 49 points, each one cell per round",
    ),
    ("PC", "RND 8KiB 0/100 at TC32/QD32, rounds of 1.00 s, to steady state"),
    ("Between rounds", "pre-write RND 8KiB 0/100 at TC32/QD32 for 1.00 s"),
    ("Tracking", "IOPS at TC32/QD32"),
    (
        "Operating points",
        "Max/Mid/Min from the demand variation window: pre-write RND 8KiB 0/100 at the point's TC/QD for "
        "1.00 s, then RND 8KiB, R/W 65/35 for 1.00 s (its response-time histogram)",
    ),
    ("block_size", "8KiB (default, A.11 implementation default)"),
    ("read_pct", "65/35 R/W (default, A.11 implementation default (OLTP))"),
    ("threads", "32, 16, 8, 6, 4, 2, 1 (default, A.11)"),
    ("depths", "32, 16, 8, 6, 4, 2, 1 (default, A.11)"),
    ("pc_round_time", "1.00 s (--quick; default 30.0 min)"),
    ("prewrite_time", "1.00 s (--quick; default 5.00 min)"),
    ("art_cutoff_ms", "5 ms (default, UNVERIFIED: A.11 implementation)"),
    ("point_prewrite_time", "1.00 s (--quick; default 60.0 min)"),
    ("histogram_time", "1.00 s (--quick; default 10.0 min)"),
    ("Rounds measured", "10 / 5 / 1"),
]

CASES = {
    "dirth test parameters": DIRTH,
    "thirteen one-line rows": [(f"Item {i}", "short") for i in range(13)],
    "thirty one-line rows": [(f"Item {i}", "short") for i in range(30)],
    "long keys": [(f"a_long_parameter_name_{i}", f"{i} s (--quick; default {i} min)") for i in range(12)],
    "long values": [(f"Item {i}", "a long value that wraps " * (i % 5 + 1)) for i in range(10)],
    "one unbroken value": [("Target", "sim:enterprise-sas?" + "&".join(f"param{i}=value{i}" for i in range(12)))]
    + [(f"Item {i}", "short") for i in range(8)],
}

# Words as real header values have them (target specs, hyphens, slashes, units), mixed at random
# with a fixed seed: rows of every length and every kind of break.
WORDS = [
    "sim:enterprise-sas?user_gb=0.536870912&op=0.280101581",
    "TC32/QD32",
    "RND",
    "8KiB",
    "0/100",
    "(default,",
    "A.11)",
    "the",
    "measurement",
    "window",
    "UNVERIFIED:",
    "point_prewrite_time",
    "32,",
    "16,",
    "1.00",
    "s",
    "(--quick;",
    "default",
    "30.0",
    "min)",
    "Max/Mid/Min",
    "pre-write",
    "response-time",
    "histogram",
    "WRITE",
    "IOPS",
    "µs",
    "≤",
    "—",
    "a",
    "long",
    "Intel(R)",
    "Xeon(R)",
    "Processor",
    "GNU/Linux",
    "6.18.44-fc-v669",
]
for seed in range(4):
    rnd = random.Random(seed)
    CASES[f"random rows {seed}"] = [
        (" ".join(rnd.choices(WORDS, k=rnd.randint(1, 3))), " ".join(rnd.choices(WORDS, k=rnd.randint(1, 14))))
        for _ in range(rnd.randint(6, 20))
    ]


def laid_out(items: list[tuple[str, str]]):
    """(the fitted column, [(row text, row bottom, box bottom) in mm]) as the PDF prints it."""
    col = fit_column("Test Parameters", items)
    doc = Document(
        "t", "spec", "test", "start", "end", "device", "tester", (col,) * 4, (), (Page("p", (Text(("x",)),)),)
    )
    [sheet] = lay_out([doc])
    box = next(b for b in sheet.boxes if b.name == "header column")
    rows = [b for b in sheet.boxes if b.name == "header row" and box.x <= b.x < box.x + box.w]
    # each row's printed lines lie within the row (the row is as high as its wrapped cells)
    for row in rows:
        printed = [ln for b in sheet.boxes if b.name in ("header key", "header value") and b.y == row.y and box.x <= b.x < box.x + box.w for ln in b.lines]  # fmt: skip
        assert printed and max(ln.bottom for ln in printed) <= row.y + row.h + 1e-6
    return col, [(row.source, row.y + row.h, box.y + box.h) for row in rows]


@pytest.mark.parametrize("case", CASES)
def test_every_header_row_kept_lies_inside_its_column(case):
    items = CASES[case]
    col, rows = laid_out(items)
    assert len(rows) == len(col.items)
    for text, row_bottom, box_bottom in rows:
        assert row_bottom <= box_bottom + 0.05, f"{text!r} ends {row_bottom - box_bottom:.1f} mm below the box"
    # nothing cut or lost: each row is whole or points to the page that prints it in full
    kept = [(k, v) for k, v in col.items if k != "…"]
    for (k, v), (k2, v2) in zip(items, kept):
        assert k == k2 and (v2 == " ".join(v.split()) or v2 == f"(in full on the {RUN_DETAILS} page)")
    if len(kept) < len(items):
        assert col.scale == MIN_SCALE
        assert col.items[-1] == ("…", f"{len(items) - len(kept)} more, on the {RUN_DETAILS} page")


def test_the_dirth_column_keeps_as_many_rows_as_fit():
    col, rows = laid_out(DIRTH)
    assert 8 <= len(col.items) < len(DIRTH) and col.items[-1][0] == "…"
    # one more row would not have fitted: the box is used, not left half empty
    _, box_bottom = rows[-1][1], rows[-1][2]
    assert box_bottom - rows[-1][1] < 2 * 5.9 * 1.22 * MIN_SCALE * 25.4 / 72 + 0.3
