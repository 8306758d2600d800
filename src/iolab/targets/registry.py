"""The built-in target kinds and their hooks. A new kind is one more `register(Kind(...))`
with every hook given (kinds.py refuses a kind without them)."""

from __future__ import annotations

from iolab.targets.cache import block_write_cache, file_write_cache, nbd_write_cache, sim_write_cache
from iolab.targets.facts import zoned_problems
from iolab.targets.kinds import Kind, register
from iolab.targets.lock import claim_block, claim_file, claim_nbd, claim_sim
from iolab.targets.purge import PURGE_METHODS, purge_block, purge_file, purge_nbd, purge_sim
from iolab.targets.safety import block_problems, file_problems, nbd_problems, sim_problems
from iolab.targets.spec import (
    parse_block,
    parse_block_elsewhere,
    parse_file,
    parse_file_elsewhere,
    parse_nbd,
    parse_sim,
)


def _block_problems(target):
    """A zoned device's refusal first: no override makes it take a test's writes."""
    return zoned_problems(target) + block_problems(target)


BLOCK = register(
    Kind(
        "block",
        ("/dev/",),
        parse_block,
        _block_problems,
        claim_block,
        purge_block,
        block_write_cache,
        purge_methods=tuple(m for m in PURGE_METHODS if m not in ("file", "none")),
        parse_elsewhere=parse_block_elsewhere,  # a host's node names that host's device: its size is asked there
    )
)
FILE = register(
    Kind(
        "file",
        ("file:",),
        parse_file,
        file_problems,
        claim_file,
        purge_file,
        file_write_cache,
        purge_methods=("auto", "file"),
        parse_elsewhere=parse_file_elsewhere,  # a host's path names that host's file: its size is asked there
    )
)
# iolab cannot purge what is behind an NBD server: 'auto' says so (not from FOB)
NBD = register(
    Kind(
        "nbd",
        ("nbd://", "nbd+unix://"),
        parse_nbd,
        nbd_problems,
        claim_nbd,
        purge_nbd,
        nbd_write_cache,
        purge_methods=("auto",),
        parse_elsewhere=parse_nbd,  # a host's URI names what that host reaches: its size is asked there
    )
)
SIM = register(
    Kind(
        "sim",
        ("sim:",),
        parse_sim,
        sim_problems,
        claim_sim,
        purge_sim,
        sim_write_cache,
        purge_methods=("auto", "sim", "sim-purge"),
        simulated=True,
    )
)
