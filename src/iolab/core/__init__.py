"""Layer 12 of 12, the bottom: the types and rules every layer shares. Workloads, plans and
stop rules (`core/workload.py`, `core/plan.py`, `core/decide.py`), the steady-state maths (`core/steady.py`), a
measured round (`core/results.py`), the cells table's one declaration (`core/cellschema.py`), units,
errors and exit codes, test parameters, what user text and user files may hold (`core/usertext.py`,
`core/safefile.py`), process helpers (`core/procs.py`) and the names of the run directory's workload
files (`core/runfiles.py`).

May import: nothing of iolab but the compiled simulator (`iolab._sim`). Imported by all.
"""
