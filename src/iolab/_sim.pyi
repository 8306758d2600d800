"""Type stub of iolab's Rust core (crates/sim): simulated SSD and HDD drives in virtual time.

All sizes are bytes, times seconds (virtual), rates IOPS. Errors in parameters or
workloads raise ValueError with a one-line message naming the parameter; Ctrl-C during a
run raises KeyboardInterrupt and leaves the drive consistent.
"""

from collections.abc import Callable

__version__: str
DEFAULT_PRESET: str

def presets() -> str:
    """JSON list of presets: {name, kind ('ssd'|'hdd'), title, default, rated_pe_cycles, warranty_years,
    calibrated_to, params: [{name, value, unit, help, choices}]}; an SSD preset's rated P/E cycles and warranty
    years and the published figures it is calibrated to (its headline), null for an HDD. Raises ValueError if a
    preset's chain of bases is broken (a cycle, a missing base)."""

def describe(preset: str, params: list[tuple[str, str]] = ...) -> str:
    """JSON facts about a preset with parameters (capacity_bytes, physical_bytes, op, ..., and for an SSD
    rated_pe_cycles and warranty_years, the preset's rated endurance), without building it."""

def smallest_size_gb(*, preset: str, params: list[tuple[str, str]]) -> float | None:
    """The smallest size above the one in `params` (an SSD's user_gb, an HDD's capacity_gb) that
    the preset takes with the other parameters as given (two significant digits, rounded up);
    None when `params` gives no such size or no larger one up to 100,000 GB does."""

def waf_oracle(policy: str, alpha: float, pages_per_block: float) -> float:
    """Analytic WAF for uniform random page writes ('greedy', 'fifo', 'random'); alpha = physical/logical."""

class Drive:
    def __init__(self, preset: str, params: list[tuple[str, str]] = ...) -> None: ...
    @staticmethod
    def load(path: str) -> Drive:
        """A drive saved by `save` (same preset and parameters, state restored)."""
    def save(self, path: str) -> None: ...
    def describe(self) -> str: ...
    def purge(self) -> float:
        """Return to fresh-out-of-box; returns the virtual seconds it took."""
    def trim(self, offset: int, length: int) -> None: ...
    def idle(self, seconds: float) -> None:
        """Let virtual time pass with no host IO (background GC and SLC eviction run)."""
    @property
    def clock_s(self) -> float: ...
    @property
    def write_cache(self) -> bool:
        """The volatile write cache (WCE); a new drive has it enabled. With it disabled an SSD
        without power-loss protection (plp=off) acknowledges writes once programmed, and an
        HDD once they are on the media; an SSD without a write buffer (buffer_kib=0) always does."""
    @write_cache.setter
    def write_cache(self, enabled: bool) -> None: ...
    @property
    def capacity(self) -> int: ...
    def counters(self) -> str:
        """JSON of the drive's present counters (lifetime totals, wear, free blocks)."""
    def memory_bytes(self) -> int: ...
    def check(self) -> None:
        """Cross-check the FTL's structures (raises ValueError if they disagree)."""
    def run(
        self,
        *,
        streams: list[tuple[str, str, int, float]],
        threads: int = 1,
        queue_depth: int = 1,
        active_range: float = 1.0,
        entropy: float = 1.0,
        rate_iops: float | None = None,
        duration_s: float | None = None,
        bytes_budget: int | None = None,
        seed: int = 0,
        zones: list[tuple[float, float]] = [],
        paths: list[int] = [],
        progress: Callable[[float, float], object] | None = None,
    ) -> str:
        """Run a stream mix [(access 'rnd'|'seq', op 'read'|'write', block bytes, share)];
        returns the raw result as JSON (see engines/sim.py for its fields). `paths`: each host
        path's outstanding IO (adding up to threads × queue_depth), when the IO comes in over
        several paths into the drive; the result then has each path's read and write figures
        under "paths"."""
    def replay(
        self,
        times_s: list[float],
        writes: list[bool],
        offsets: list[int],
        sizes: list[int],
        queue_depth: int,
        entropy: float = ...,
        progress: Callable[[float, float], object] | None = None,
    ) -> str:
        """Replay IOs at their timestamps (open loop, at most queue_depth outstanding)."""

class StreamWalk:
    """The stream analysis's per-IO walks (iolab.traces.analysis): the SEQ rule, the in-flight count and the
    per-step tabulation over a query's rows in issue order, read in place from an Arrow C stream (a PyCapsule
    'arrow_array_stream', or an object with __arrow_c_stream__, such as a DuckDB relation) by a thread of its own.
    Columns: time_ns, offset_bytes, size_bytes (> 0) BIGINT; w UTINYINT (1: write); lat DOUBLE (µs, < 0: none);
    optionally dev INTEGER (device code >= 0) and frn BIGINT (the file row number, which cuts the chunks when the
    query filters rows). Raises ValueError on a missing column, a wrong type, NULLs or a bad value."""

    def __init__(self, *, step_ns: int, lookback: int, gap_bytes: int, has_latency: bool, max_steps: int) -> None:
        """max_steps: the most steps an issue or completion may reach (ValueError past it, before allocating)."""
    def open(self, *, stream: object, chunk_rows: int) -> None:
        """Start reading the stream, whose rows are tabulated in chunks of chunk_rows file rows."""
    def next_chunk(
        self,
    ) -> tuple[list[tuple[int, bool, bool, int, int, int, float, float]] | None, tuple[bytes, ...] | None] | None:
        """Walk the next chunk: (rows, None), rows (step, seq, write, size, IOs, latencies counted, their sum, their
        maximum or -1) in that order; or (None, the chunk's issue times, SEQ flags, write flags, sizes and latencies
        as bytes of int64, bool, bool, int64, float64) when it has more than 2^22 possible (step, seq, write, size)
        slots; None at the end of the stream."""
    def close(self) -> None:
        """Stop reading the stream and end its thread."""
    def finish(self, *, n_steps: int) -> tuple[list[float], list[int]]:
        """In-flight ns and maximum in-flight count per step (at least n_steps long), the levels at the starts of
        the steps after the last issue included. ValueError when n_steps is more than max_steps."""
    @property
    def missing_latency(self) -> int: ...
    @property
    def last_completion_ns(self) -> int | None: ...
    @property
    def ios(self) -> int: ...
    @property
    def last_issue_ns(self) -> int: ...
