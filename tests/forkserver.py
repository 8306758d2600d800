"""The tests' `iolab` processes, forked from one that has already imported the command line.

The suite starts `iolab` about 2,500 times; each fresh start imports Python's standard library,
Typer, Rich and the Typer app again, about 0.15 CPU-s of the 0.3 a short command costs, a sixth
of the whole suite's CPU on a 2-core CI machine. Here a server process per pytest worker starts
as `iolab` starts (its argv[0], the worker's environment, stdout and stderr to /dev/null) and
imports `iolab.cli.main`, the Typer app and every other iolab module, then forks one child per
command line: the child takes the caller's pipes as stdout and stderr, its environment, working
directory and umask, and runs `main()` as the console script does, ending as the interpreter
does (atexit handlers, flushed streams, its exit status or the signal that killed it). A test sees a process of its own
with the exit code, stdout and stderr a fresh `iolab` gives.

What a fork cannot give, a fresh start does: an environment that differs from the server's in
what Python, Rich or numpy read as they are imported (IMPORT_TIME: the terminal's width and
colours, the locale, the time zone, PYTHON*, thread counts), and `iolab --version`, answered
before the app is imported (its own test counts what it loads). Tests of the start itself
(modules loaded, Ctrl-C while importing, signals to a running command) start `iolab` themselves.
"""

from __future__ import annotations

import atexit
import gc
import io
import json
import locale
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

IOLAB = str(Path(sys.executable).parent / "iolab")
IMPORT_TIME = {"COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "TZ", "LANG", "LANGUAGE"}
IMPORT_TIME_PREFIXES = ("PYTHON", "LC_", "TTY_", "JUPYTER", "RICH", "_TYPER", "NPY_", "NUMPY_", "OPENBLAS", "OMP_")


def _import_time_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k in IMPORT_TIME or k.startswith(IMPORT_TIME_PREFIXES)}


# -- the server ---------------------------------------------------------------------------------


def _import_every_module() -> None:
    """Every iolab module imported once here, not in each command: a command's own imports (its
    runner, engines, store, figures; numpy, DuckDB, Jinja) were another 0.05-0.11 CPU-s of each.
    What a fresh start would load later and this has loaded already can differ in one way only:
    a package's submodule reached as an attribute without its import, which
    tests/unit/test_package_attributes.py refuses in the source. No iolab module reads the
    environment as it is imported (IMPORT_TIME lists what Python and the libraries read).

    What the imports made is then frozen, out of the collector's sight: a child's collections,
    and the last one as the interpreter ends, would otherwise walk every object and, writing
    their headers, copy the server's memory page by page (32 forked commands 5.9 CPU-s without
    the imports and the freeze, 4.5 with both, 9.5 with both and everything unfrozen at exit).
    The trace modules are left to the commands that use them: frozen, DuckDB's bindings report
    the objects a finished interpreter did not free ("nanobind: leaked 27 instances!" on
    stderr), and imported after the freeze they cost more at each exit than their import."""
    import importlib
    import pkgutil

    import iolab

    names = [found.name for found in pkgutil.walk_packages(iolab.__path__, "iolab.")]
    for name in names:
        if not name.startswith("iolab.traces"):
            importlib.import_module(name)
    if "duckdb" not in sys.modules:  # (another module importing it: slower, never a leak report)
        gc.freeze()


def serve(listen_fd: int) -> None:
    """Accept command lines on the listening socket; fork a child for each, answer its pid, then
    its wait status once it ends. Single-threaded (a fork copies only the thread that forks)."""
    from iolab.cli import app as _app  # noqa: F401  # what every command but --version imports
    from iolab.cli.main import main

    _import_every_module()

    listener = socket.socket(fileno=listen_fd)
    waiting: dict[int, socket.socket] = {}
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            if key.fileobj is listener:
                conn, _addr = listener.accept()
                pid = _start(conn, (sel, listener, *waiting.values()), (wake_r, wake_w), main)
                if pid:
                    waiting[pid] = conn
            else:
                os.read(wake_r, 4096)
        while waiting:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = waiting.pop(pid, None)
            if conn is not None:
                try:
                    conn.sendall(f"{status}\n".encode())
                except OSError:
                    pass
                conn.close()


def _start(conn: socket.socket, close: tuple, fds_to_close: tuple[int, ...], main) -> int:
    """Read one request and fork its child; returns the child's pid (0: a request it could not read)."""
    try:
        msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 2)
        req = json.loads(msg)
    except (OSError, ValueError):
        conn.close()
        return 0
    pid = os.fork()
    if pid == 0:
        _child(req, fds, (*close, conn), fds_to_close, main)  # never returns
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    return pid


def _child(req: dict, fds: list[int], close: tuple, fds_to_close: tuple[int, ...], main) -> None:
    """The forked command: the server's own files closed (through their objects, so none is
    closed again later under a number the command has reused), the caller's pipes as stdout
    and stderr, its environment, directory and umask; then `main()` as the console script."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for x in close:
        x.close()
    for fd in fds_to_close:
        os.close(fd)
    os.dup2(fds[0], 1)
    os.dup2(fds[1], 2)
    for fd in fds:
        os.close(fd)
    os.chdir(req["cwd"])
    os.umask(req["umask"])
    os.environ.clear()
    os.environ.update(req["env"])
    sys.argv = [IOLAB, *req["args"]]
    main()
    # Out of the server's loop, whatever main() ends with: the interpreter then ends the child as
    # it ends a fresh start (its atexit handlers; an uncaught exception's traceback and exit 1,
    # an uncaught KeyboardInterrupt as SIGINT).
    raise SystemExit(0)


# -- the client (in each pytest worker) -----------------------------------------------------------


class ForkServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._path = ""
        self._env: dict[str, str] = {}

    def _started(self, env: dict[str, str]) -> str:
        """The server's socket path, started with `env` if none runs. The socket listens before
        the server starts: a command line sent while it imports waits in the socket's queue."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return self._path
            self.stop_unlocked()
            d = tempfile.mkdtemp(prefix="iolab-forks-")
            self._path = os.path.join(d, "s")
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(self._path)
            listener.listen(64)
            # argv[0] and sys.path[0] as the console script has them (iolab/__init__.py reads argv[0])
            code = f"import sys; sys.argv[0] = {IOLAB!r}; sys.path[0] = {str(Path(__file__).parent.parent)!r}; "
            code += f"from tests.forkserver import serve; sys.path[0] = {str(Path(IOLAB).parent)!r}; "
            code += f"serve({listener.fileno()})"
            self._env = dict(env)
            self._proc = subprocess.Popen(
                [sys.executable, "-c", code],
                pass_fds=(listener.fileno(),),
                env=self._env,
                stdin=subprocess.DEVNULL,  # as the tests' commands have it: none reads its input
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            listener.close()
            return self._path

    def stop(self) -> None:
        with self._lock:
            self.stop_unlocked()

    def stop_unlocked(self) -> None:
        """The server killed (if it runs) and its socket's directory removed."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        if self._path:
            shutil.rmtree(os.path.dirname(self._path), ignore_errors=True)
            self._path = ""

    def run(self, args: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
        """`iolab ARGS` as subprocess.run([IOLAB, *args], capture_output=True, text=True, ...) gives it."""
        path = self._started(env)
        if _import_time_env(env) != _import_time_env(self._env):
            return subprocess.run([IOLAB, *args], capture_output=True, text=True, timeout=timeout, env=env)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        umask = os.umask(0)
        os.umask(umask)
        req = {"args": args, "env": env, "cwd": os.getcwd(), "umask": umask}
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            socket.send_fds(sock, [json.dumps(req).encode()], [out_w, err_w])
        finally:
            os.close(out_w)
            os.close(err_w)
        reply = sock.makefile("rb")
        pid = int(reply.readline())
        try:
            out, err = _read_both(out_r, err_r, time.monotonic() + timeout)
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)
            reply.readline()
            sock.close()
            raise subprocess.TimeoutExpired([IOLAB, *args], timeout) from None
        status = int(reply.readline())
        sock.close()
        return subprocess.CompletedProcess([IOLAB, *args], os.waitstatus_to_exitcode(status), _text(out), _text(err))


def _read_both(out_r: int, err_r: int, deadline: float) -> tuple[bytes, bytes]:
    got = {out_r: bytearray(), err_r: bytearray()}
    sel = selectors.DefaultSelector()
    for fd in got:
        sel.register(fd, selectors.EVENT_READ)
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired("iolab", 0)
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    got[key.fd] += chunk
                else:
                    sel.unregister(key.fd)
    finally:
        sel.close()
        os.close(out_r)
        os.close(err_r)
    return bytes(got[out_r]), bytes(got[err_r])


def _text(data: bytes) -> str:
    """Decoded as subprocess's text mode does (the locale's encoding, universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding=locale.getpreferredencoding(False), newline=None).read()


SERVER = ForkServer()
atexit.register(SERVER.stop)
