"""Layer 2 of 12: iolab for scripts and CI: `iolab check` and its noise rules (`automation/check.py`,
`automation/tstat.py`), `iolab history` and its trend chart, `run --repeat` (`automation/repeats.py`) and published
figures beside measured ones (`automation/published.py`).

May import: api, suites, run, pages, figures, engines, store, traces, targets, core. Imported
by cli only.
"""
