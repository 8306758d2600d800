"""Trace import under broken input: how many fuzz cases end in a crash (goal: 0).

    .venv/bin/python bench/fuzz_import.py                 # 1 million cases
    .venv/bin/python bench/fuzz_import.py --cases 20000   # a quick run

Cases come from iolab.traces.fuzz: valid lines (records, for the binary formats) of every
format iolab reads, mangled one by one (byte flips, cuts, huge/negative/odd numbers, fields
dropped or doubled, random bytes, invalid UTF-8, UTF-16, over-long lines). `--batch` cases
of one format go into one file, which is itself sometimes cut, given a UTF-16 byte-order
mark, gzipped (and maybe cut) or emptied; each file is imported in-process without and with
--skip-bad-lines. A crash is any exception other than iolab's own error (a clear message), or an import
that --skip-bad-lines lets a database error abort.
When a file crashes, its lines are bisected to the ones that crash alone, and those lines are
counted and saved under --save. Formats take turns; the seed makes a run repeatable.

Printed: cases and files run, crashes (files, and lines found by bisection), cases per
second, and a baseline measured in the same run: the import of a clean file of --batch valid
lines, so the ratio shows what broken input costs against good input.
"""

from __future__ import annotations

import argparse
import atexit
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from iolab.traces import fuzz


def bisect(lines: list[bytes], head: bytes, fmt: str, work: Path) -> list[bytes]:
    """The lines that crash the reader on their own (after the header)."""
    path, out = work / f"bisect.{fmt}", work / "bisect.parquet"

    def crashes(part: list[bytes]) -> bool:
        path.write_bytes(head + b"".join(part))
        return fuzz.run(path, fmt, out) is not None

    if not crashes(lines):
        return []
    if len(lines) == 1:
        return lines
    mid = len(lines) // 2
    found = bisect(lines[:mid], head, fmt, work) + bisect(lines[mid:], head, fmt, work)
    return found or [b"".join(lines)]  # only crashes in combination: keep the whole group


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=1_000_000, help="mangled lines/records in all (default 1 million)")
    ap.add_argument("--batch", type=int, default=2000, help="cases per file (default 2000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--formats", default=",".join(fuzz.cases()), help="comma-separated (default: every reader)")
    ap.add_argument("--save", default="fuzz-crashes", help="directory for crashing inputs (created only on a crash)")
    ap.add_argument("--smoke", action="store_true", help="100 cases of two formats: does the bench still run?")
    args = ap.parse_args()
    if args.smoke:
        args.cases, args.batch, args.formats = 100, 50, ",".join(list(fuzz.cases())[:2])
    fmts = args.formats.split(",")
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="iolab-fuzz-"))
    atexit.register(shutil.rmtree, work, True)  # the cases; crashing ones are kept under --save
    save = Path(args.save)

    # Baseline: clean files of the same size, one per format.
    t0 = time.perf_counter()
    for fmt in fmts:
        head, body = fuzz.seeds(fmt)
        clean = work / f"clean.{fmt}"
        clean.write_bytes(
            head + b"".join(body[i % len(body)] for i in range(args.batch if fmt in fuzz.text_cases() else len(body)))
        )
        if fuzz.run(clean, fmt, work / "clean.parquet") is not None:
            sys.exit(f"baseline: a clean {fmt} file crashes the reader")
    base_s = (time.perf_counter() - t0) / len(fmts)

    cases = files = crash_files = 0
    crash_lines: list[tuple[str, bytes]] = []
    t0 = time.perf_counter()
    last = t0
    while cases < args.cases:
        fmt = fmts[files % len(fmts)]
        n = min(args.batch, args.cases - cases)
        data, k = fuzz.case_file(rng, fmt, n)
        data = fuzz.file_level(rng, data)
        path = work / f"case.{fmt}"
        path.write_bytes(data)
        crash = fuzz.run(path, fmt, work / "out.parquet")
        if crash is not None:
            crash_files += 1
            save.mkdir(parents=True, exist_ok=True)
            (save / f"{files:06d}.{fmt}").write_bytes(data)
            (save / f"{files:06d}.{fmt}.txt").write_text(crash)
            print(f"crash in file {files} ({fmt}): {crash.splitlines()[0]}", flush=True)
            if fmt in fuzz.text_cases() and not data.startswith(b"\x1f\x8b"):
                head, _ = fuzz.seeds(fmt)
                body = data[len(head) :] if data.startswith(head) else data
                for line in bisect(body.splitlines(keepends=True), head if data.startswith(head) else b"", fmt, work):
                    crash_lines.append((fmt, line))
        cases += k
        files += 1
        now = time.perf_counter()
        if now - last > 30:
            print(
                f"  {cases:,} cases, {files:,} files, {crash_files} crashing files, {cases / (now - t0):,.0f} cases/s",
                flush=True,
            )
            last = now
    wall = time.perf_counter() - t0
    for i, (fmt, line) in enumerate(crash_lines):
        (save / f"line-{i:04d}.{fmt}").write_bytes(line)
    print(
        f"cases           {cases:,} mangled lines/records in {files:,} files over {len(fmts)} formats "
        f"(seed {args.seed}, {args.batch} per file)"
    )
    print(
        f"crashes         {crash_files} files, {len(crash_lines)} lines that crash alone (goal 0)"
        + (f"; inputs saved in {save}/" if crash_files else "")
    )
    print(f"speed           {cases / wall:,.0f} cases/s, {files / wall:.2f} files/s ({wall:,.1f} s)")
    print(
        f"baseline        a clean file of {args.batch} lines imports (twice) in {base_s:.3f} s; broken files take "
        f"{wall / files / base_s:.2f} x that"
    )


if __name__ == "__main__":
    main()
