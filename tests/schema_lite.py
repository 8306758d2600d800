"""The schema check the tests use is the product's own (iolab/pages/schema_lite.py): `iolab check`
and `compare` hold a saved --json document to the same schema before reading it."""

from iolab.pages.schema_lite import errors as errors  # noqa: PLC0414 (re-export)
