"""Whether an error is the system refusing a write for want of room: one rule for every writer
(Python's files, SQLite, DuckDB, the Rust simulator), which each say it in their own way."""

from __future__ import annotations

import errno
import re
import sqlite3

# DuckDB (Parquet exports, trace tables) reports a write the system refused as its own IOException,
# the errno only in its text: {"exception_type":"IO",...,"errno":"28"}
_DUCKDB_ERRNO = re.compile(r'"errno"\s*:\s*"(\d+)"')
# the simulator (Rust) raises ValueError with the io::Error's text: "... (os error 28)"
_RUST_ERRNO = re.compile(r"\(os error (\d+)\)")


def is_disk_full(e: BaseException) -> bool:
    """The system refused a write for want of room (ENOSPC, or a quota), however the library that
    wrote said it: an OSError, SQLite's "disk is full", DuckDB's IO error or the simulator's
    ValueError with errno 28."""
    if isinstance(e, OSError):
        return e.errno in (errno.ENOSPC, errno.EDQUOT)
    if isinstance(e, sqlite3.OperationalError):
        return getattr(e, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(e)
    if type(e).__module__.lstrip("_") == "duckdb" and (m := _DUCKDB_ERRNO.search(str(e))):
        return int(m.group(1)) in (errno.ENOSPC, errno.EDQUOT)
    if isinstance(e, ValueError) and (m := _RUST_ERRNO.search(str(e))):
        return int(m.group(1)) in (errno.ENOSPC, errno.EDQUOT)
    return False
