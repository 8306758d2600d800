"""Layer 2 of 12: iolab for scripts and CI: `iolab check` (`automation/check.py`) and its noise rules,
tolerances, verdicts and JUnit XML (`automation/noise.py`, `automation/tstat.py`, `automation/tolerances.py`,
`automation/verdict.py`, `automation/check_junit.py`), `iolab history` and its trend chart, `run --repeat` (`automation/repeats.py`) and published
figures beside measured ones (`automation/published.py`).

May import: api, suites, run, pages, figures, engines, store, traces, targets, core. Imported
by cli only.
"""
