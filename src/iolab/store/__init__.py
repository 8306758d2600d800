"""Layer 9 of 12: the run directory. `runstore.py` (`RunStore`: cells, rounds, phases, steady
state), `bulk.py` (whole-run reads), `store/resultsdb.py` (results.db as a file), `store/manifest.py`
(manifest.json, run naming), `store/rawaside.py` (raw output set aside), `store/durable.py` (atomic writes,
a full results disk).

May import: traces, targets, core. Imported by the layers above; never by engines (a
forbidden contract: an engine hands its result back, the runner stores it).
"""
