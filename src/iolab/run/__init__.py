"""Layer 5 of 12: running a plan. `run/runstart.py` opens a run (options, safety checks, claim,
run directory), `run/runner.py` runs any plan's phases (purge, preconditioning, rounds, steady
state or stop rule) and stores every cell, `run/resume.py` continues an interrupted run (with
`run/identity.py` and `run/leftovers.py`), `run/live.py` writes the live status the watch page reads. It
never knows which test it serves.

May import: figures, engines, store, traces, targets, core, and never pages (a forbidden
contract: the runner draws no page). Imported by api, automation and cli.
"""
