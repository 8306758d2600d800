"""The one exception type users see: a clear paragraph, no traceback.

Every module raises `IolabError` for bad input, refused actions and engine failures; the CLI
prints its message and exits non-zero. Anything else escaping is a bug in iolab.
"""


class IolabError(Exception):
    """A user-facing failure. `str(err)` is the whole explanation (what, where, how to fix)."""

    exit_code = 2


class RefusedError(IolabError):
    """A destructive action was refused by a safety check (override flag named in the message)."""

    exit_code = 3


class EngineError(IolabError):
    """The IO engine failed or produced output iolab cannot trust."""

    exit_code = 4
