"""`--ioengine`: fio's IO engine for block devices and files, and what `auto` picks. Here, not
in engines/fio_job.py (which re-exports them), so that the command line can name and check
them in its options without importing the engines and the targets."""

from __future__ import annotations

from iolab.core.errors import IolabError

# `--ioengine`: fio's engine for block devices and files (an NBD export always uses fio's nbd).
IOENGINES = ("auto", "io_uring", "libaio")
# What `auto` picks per target kind, measured with bench/overhead.py (figures in
# bench/README.md). On a RAM-speed block device (zram), where fio's own cost is the limit,
# libaio gave 1.2-2.1x the IOPS and 1.2-1.7x the IOs per fio CPU-second of io_uring; on a
# file the two were within the noise (0.97-1.02x IOPS), so libaio there too: it works on
# every kernel and keeps file and device runs on one engine.
AUTO_IOENGINE = {"block": "libaio", "file": "libaio"}
AUTO_RULE = "libaio on block devices and files"
# The only engines a job file for a block device or file names (`auto` is resolved before).
JOB_IOENGINES = tuple(e for e in IOENGINES if e != "auto")


def check_ioengine(choice: str) -> str:
    if choice not in IOENGINES:
        raise IolabError(
            f"--ioengine {choice!r}: use io_uring, libaio or auto (auto: {AUTO_RULE}; "
            "libaio where this host cannot run io_uring; NBD exports always use fio's nbd engine)."
        )
    return choice
