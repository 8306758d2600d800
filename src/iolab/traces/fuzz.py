"""Broken trace files for robustness checks of the readers (the fuzz test and
bench/fuzz_import.py).

A case is one mangled line (text formats) or record (binary formats), starting from valid
ones: the lines iolab's own exporters write for a small table, or the sample lines a format
without a writer declares (registry.TraceFormat.sample). The cases are derived from the
registered formats (`cases()`): one per writer, one per format without a writer. Mangling: byte flips,
truncation, a field replaced by a huge, negative, fractional or non-numeric value, fields
dropped or doubled, random bytes, invalid UTF-8, UTF-16, over-long lines. Many cases are
imported together as one file (the readers judge each line on its own, so one file of N
mangled lines exercises N cases); the file itself may also be cut short or compressed.

`run(path, fmt)` imports a file with and without `skip_bad_lines` and returns the first
failure, or None (the goal for every file): an exception that is not an IolabError (a
crash), or, with skip_bad_lines, an import aborted by a database error instead of the bad
line being skipped.
"""

from __future__ import annotations

import gzip
import random
import tempfile
import traceback
from functools import cache
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.traces import formats
from iolab.traces.registry import TraceFormat, Writer


def cases() -> dict[str, tuple[TraceFormat, Writer | None]]:
    """Fuzz case name -> (format, writer): one case per writer (a format's output is what is
    mangled), and one per format without a writer (its declared sample lines are); text
    cases first, then binary ones, each in registry order."""
    found: dict[str, tuple[TraceFormat, Writer | None]] = {}
    for binary in (False, True):
        for f in formats.all_formats():
            if f.binary == binary:
                found.update({w.name: (f, w) for w in f.writers} if f.writers else {f.name: (f, None)})
    return found


def text_cases() -> tuple[str, ...]:
    return tuple(n for n, (f, _) in cases().items() if not f.binary)


def reader(case: str) -> str:
    """The format (reader) a fuzz case is imported as."""
    return cases()[case][0].name


HUGE = (
    b"18446744073709551615",
    b"18446744073709551616",
    b"9223372036854775807",
    b"9223372036854775808",
    b"-1",
    b"-9223372036854775808",
    b"1e300",
    b"-1e300",
    b"nan",
    b"inf",
    b"0.5",
    b"99999999999999999999999",
    b"0x28",
    b"",
    b" ",
    b"1,2",
    b"\xff",
    b"\xc3\xa9",
    b"0" * 40,
    b"[",
    b"]",
    b"'",
    b"\\",
)


@cache
def seeds(case: str) -> tuple[bytes, tuple[bytes, ...]]:
    """(head, body): the header lines and the data lines (or records) of a valid file."""
    fmt, writer = cases()[case]
    if writer is None:
        lines = [(ln + "\n").encode() for ln in fmt.sample]
        return b"".join(lines[: fmt.sample_head]), tuple(lines[fmt.sample_head :])
    data = _written(case)
    if fmt.binary:
        if writer.record_bytes:
            n = writer.record_bytes
            return b"", tuple(data[i : i + n] for i in range(0, len(data), n))
        return b"", (data,)  # variable-length records: mangled as a whole stream
    lines = data.splitlines(keepends=True)
    body = lines[writer.head_lines :]
    if writer.io_line is not None:  # its IO lines, not what the writer adds after them
        body = [ln for ln in body if writer.io_line(ln)]
    return b"".join(lines[: writer.head_lines]), tuple(body)


def _written(case: str) -> bytes:
    """A small table with known IOs, written by the case's writer."""
    from iolab.traces.table import table_from_rows
    from iolab.traces.writers import export_trace

    with tempfile.TemporaryDirectory(prefix="iolab-fuzz-") as d:
        rows = [
            (i * 1000 + i * i, "8,16", "read" if i % 3 else "write", i * 8192, 4096 * (1 + i % 4), "fio", 40.0 + i)
            for i in range(12)
        ]
        t = table_from_rows(rows, Path(d) / "t.parquet")
        return export_trace(t, case, Path(d) / f"seed.{case}").read_bytes()


def mangle(rng: random.Random, line: bytes) -> bytes:
    """One mangled line (kept as it is one time in eight, so good lines surround bad ones)."""
    k = rng.randrange(11)
    end = b"\n" if line.endswith(b"\n") else b""
    body = line.rstrip(b"\n")
    if k == 0 or not body:
        return line
    if k == 1:  # flip bytes
        b = bytearray(body)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b).replace(b"\n", b"") + end
    if k == 2:  # cut
        return body[: rng.randrange(len(body))] + end
    if k in (3, 4, 5):  # a field replaced by something odd
        sep = b"," if b"," in body and b" " not in body.strip() else b" "
        parts = body.split(sep)
        i = rng.randrange(len(parts))
        parts[i] = rng.choice(HUGE) if k != 5 else bytes(rng.randrange(32, 127) for _ in range(rng.randint(0, 6)))
        return sep.join(parts) + end
    if k == 6:  # fields dropped or doubled
        parts = body.split()
        i = rng.randrange(len(parts))
        parts = parts[:i] + parts[i + 1 :] if rng.random() < 0.5 else parts[: i + 1] + parts[i:]
        return b" ".join(parts) + end
    if k == 7:  # random bytes
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 60))).replace(b"\n", b"") + end
    if k == 8:  # not UTF-8, or UTF-16
        return (body + b"\xe9\xff" if rng.random() < 0.5 else body.decode("latin-1").encode("utf-16-le")) + end
    if k == 9:  # a long line, now and then past the line limit
        n = rng.choice((300, 5000, (1 << 20) + 10)) if rng.random() < 0.05 else 300
        return body + b"9" * n + end
    return body + end + body + end  # a duplicate


def mangle_record(rng: random.Random, rec: bytes) -> bytes:
    b = bytearray(rec)
    k = rng.randrange(5)
    if k == 0:
        return rec
    if k in (1, 2):
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif k == 3:  # an 8-byte field set to all ones / a huge value
        i = rng.randrange(0, max(1, len(b) - 8), 8)
        b[i : i + 8] = rng.choice((b"\xff" * 8, b"\x00" * 7 + b"\x80", b"\xff" * 7 + b"\x7f"))
    else:
        return bytes(b[: rng.randrange(len(b))])
    return bytes(b)


def case_file(rng: random.Random, fmt: str, n: int) -> tuple[bytes, int]:
    """A file of `n` mangled lines or records of `fmt` (plus its header), and the number
    of cases in it."""
    head, body = seeds(fmt)
    spec, writer = cases()[fmt]
    if spec.binary and not (writer and writer.record_bytes):
        data = bytearray(body[0] * max(1, n // 40))
        for _ in range(max(1, n // 8)):
            op = rng.randrange(3)
            i = rng.randrange(len(data))
            if op == 0:
                data[i] = rng.randrange(256)
            elif op == 1:
                data[i : i + 8] = b"\xff" * 8
            else:
                del data[i : i + rng.randint(1, 48)]
        return bytes(data), n
    if spec.binary:
        return b"".join(mangle_record(rng, rng.choice(body)) for _ in range(n)), n
    lines = [mangle(rng, rng.choice(body)) for _ in range(n)]
    if head and rng.random() < 0.1:
        head = mangle(rng, head)
    return head + b"".join(lines), n


def file_level(rng: random.Random, data: bytes) -> bytes:
    """Now and then mangle the file as a whole: cut it, BOM it, gzip it (maybe cut)."""
    k = rng.randrange(12)
    if k == 0 and data:
        return data[: rng.randrange(len(data))]
    if k == 1:
        return b"\xff\xfe" + data
    if k == 2:
        z = gzip.compress(data)
        return z if rng.random() < 0.5 else z[: rng.randrange(len(z))]
    if k == 3:
        return b""
    return data


def run(path: Path, fmt: str, out: Path) -> str | None:
    """Import `path` as `fmt` without and with skip_bad_lines: the first crash (an exception
    other than IolabError) as text, or None."""
    from iolab.traces.readers import import_trace

    for skip in (False, True):
        try:
            import_trace(path, reader(fmt), out, skip_bad_lines=skip)
        except IolabError as e:
            # With skip_bad_lines a bad line must be skipped, not abort the import with the
            # database engine's own words.
            if skip and "cannot read as" in str(e):
                return f"aborted with skip_bad_lines: {e}"
        except Exception as e:  # noqa: BLE001  (a crash is what is being looked for)
            return f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-3)}"
    return None


__all__ = ["case_file", "cases", "file_level", "mangle", "reader", "run", "seeds", "text_cases"]
