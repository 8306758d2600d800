"""The comparison report's pages, above report/ (they are built from its page model, plots and
page builders): `document` (one test on N drives: summary, rankings, the test's overlays,
per-drive facts), `sequence` (a sequence's tests on N drives), and each family's overlays
(`pts`, `pts2`, `rwsw`, `characterise`). The figures they show are computed in compare/."""
