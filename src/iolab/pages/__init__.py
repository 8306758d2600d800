"""Layer 6 of 12: what a stored run looks like to people and programs: the PDF/HTML report
(`pages/report/`), the comparison's pages (`pages/compare_pages/`, above `pages/report/`), the terminal views
(`pages/textreport.py`, `pages/chartext.py`), the run as a JSON document and its schema (`outcome*.py`,
`pages/schema_lite.py`) and `pages/export.py`. Reads only the run directory.

May import: figures, engines (capabilities only), store, traces, targets, core. Never run,
suites or above: a page is built from the plan stored in the run, not today's suite code.
"""
