"""The one exception type users see: a clear paragraph, no traceback.

Every module raises `IolabError` for bad input, refused actions and engine failures; the CLI
prints its message and exits non-zero. Anything else escaping is a bug in iolab.
"""


# The exit codes of every iolab command, as docs/automation.md lists them; the error classes
# below and the CLI take theirs from here.
class Exit:
    OK = 0
    BUG = 1  # an unexpected exception: a bug in iolab (Python prints the traceback); `run` with several
    # --target exits with the first failed run's own code (api/scaleout.run_many), never 1 for it
    BAD_INPUT = 2  # bad input, a refused request, a run that cannot be read; also usage errors
    REFUSED = 3  # a write refused by a safety check (the override flag is named)
    ENGINE = 4  # the IO engine failed or gave output iolab cannot trust; the run is kept as failed
    DISK_FULL = 5  # the results filesystem filled: the run stopped, everything stored before is kept
    NOT_STEADY = 6  # --require-steady: a phase did not reach steady state or was not evaluated, or the run
    # did not complete (show); check: a run on either side did not
    REGRESSION = 7  # iolab check: a key figure regressed beyond noise and tolerance, or is missing
    AUDIT_FAILED = 8  # iolab audit: a stored run broke a physical invariant (its figures are marked)
    INTERRUPTED = 130  # Ctrl-C; 128 + N when stopped by signal N (SIGTERM: 143)


class IolabError(Exception):
    """A user-facing failure. `str(err)` is the whole explanation (what, where, how to fix)."""

    exit_code = Exit.BAD_INPUT


class RefusedError(IolabError):
    """A destructive action was refused by a safety check (override flag named in the message)."""

    exit_code = Exit.REFUSED


class EngineError(IolabError):
    """The IO engine failed or produced output iolab cannot trust."""

    exit_code = Exit.ENGINE
