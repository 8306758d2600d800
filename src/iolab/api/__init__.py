"""Layer 3 of 12: the library the command line wraps. `runs.py` starts, runs, shows, reports
and compares a test (the one place that asks the test registry, `api/registry.py`, and hands a
test's declared functions down); `results.py` reads stored runs from Python (the public API);
`api/scaleout.py` runs one test on several targets or hosts, `watch*.py` serve the live page,
`calibrate*.py` fit a simulated drive to stored runs, `api/runlist.py` lists the runs directory.

May import: suites, run, pages, figures, engines, store, traces, targets, core. Imported by
cli and automation.
"""
