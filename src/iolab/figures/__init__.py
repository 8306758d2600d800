"""Layer 7 of 12: figures derived from stored measurements, as pure as their inputs allow:
a phase's window averages (`figures/summary.py`), comparisons' figures and rankings (`figures/compare/`),
DIRTH/XSR points (`figures/points.py`), endurance (`figures/endurance.py`), when a phase may end on evidence
(`figures/phaseend.py`), the SLC cliff and IO consistency (`slc.py`, `consistency.py`) and the
self-audit (`figures/audit.py`, `figures/audit_checks.py`).

May import: store (to read it), traces, targets, core; engines only for `engines/reread.py`, the engines' own
parsers of a stored raw output (the audit's raw-figures derives each stored figure again with them). Imported by
pages, run, suites and above.
"""
