"""Target specs: what the user wrote, read into a Target.

/dev/XXX[?size=SIZE]               a block device (whole disk, partition, loop, zram, ...); ?size=
                                   tests its first SIZE bytes (at most the device's size)
file:PATH?size=8GiB                a regular file, created and sized when absent
nbd://HOST[:PORT][/EXPORT]         an NBD export over TCP, reached through fio's nbd engine
nbd+unix:///EXPORT?socket=PATH     an NBD export over a Unix socket
                                   (?size= at most the export's size, which its server is asked)
sim:PRESET?param=value             the built-in simulated drive
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import stat
import urllib.parse
from collections.abc import Callable

from iolab.core.errors import IolabError, RefusedError
from iolab.core.units import parse_size
from iolab.core.usertext import check_fio_value, check_text
from iolab.targets import host
from iolab.targets.facts import device_facts, file_type
from iolab.targets.kinds import kind_for_spec
from iolab.targets.model import DeviceFacts, Elsewhere, EndpointView, Target
from iolab.targets.usage import pseudo_filesystem

_FORMS = (
    "Accepted forms: /dev/NAME[?size=SIZE] (a block device), file:PATH?size=8GiB, nbd://HOST[:PORT][/EXPORT]"
    "[?size=SIZE], nbd+unix:///EXPORT?socket=PATH[&size=SIZE], sim:PRESET[?param=value&...]."
)


def parse_target(spec: str, elsewhere: Elsewhere | None = None) -> Target:
    """Read a target spec (see the module docstring) with its registered kind's reader. Bad
    specs raise IolabError. `elsewhere`: the spec is another machine's (a hosts run's host),
    and what it names is asked there, never here (Kind.parse_elsewhere)."""
    text = check_text(spec, "target").strip()
    kind = kind_for_spec(text)
    if kind is not None:
        if elsewhere is not None and kind.parse_elsewhere is not None:
            return kind.parse_elsewhere(spec, text, elsewhere)
        return kind.parse(spec, text)
    hint = ""
    if text.startswith(("nbds://", "nbds+unix://")):
        hint = " NBD over TLS is not supported."
    elif text.startswith(("/", ".")):
        hint = _path_hint(text)
    raise IolabError(f"target {spec!r}: not a target spec iolab understands.{hint} {_FORMS}")


def _path_hint(text: str) -> str:
    """What to write for a path given bare: for a block device, its node under /dev (a symlink
    elsewhere to one, /var/tmp/disk -> /dev/loop0, was told file:, which is then refused as a
    block device); else file: for a regular file."""
    path, sep, query = text.partition("?")
    try:
        st = os.stat(path)  # the node the path leads to; nothing is opened
    except (OSError, ValueError):
        return f" For a regular file write file:{text}."
    if stat.S_ISDIR(st.st_mode):
        return f" {path} is a directory: write {_in_directory(path)}"
    if not stat.S_ISBLK(st.st_mode):
        return f" For a regular file write file:{text}."
    node = os.path.realpath(path)
    if not node.startswith("/dev/"):  # a node made elsewhere (mknod): the kernel's name for its number
        name = os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"))
        node = f"/dev/{name}"
    try:
        same = os.stat(node).st_rdev == st.st_rdev
    except OSError:
        same = False
    if same:
        return f" {path} is the block device {node}: write {node}{sep}{query} as the target."
    return f" {path} is a block device: write its node under /dev as the target."


def _in_directory(path: str) -> str:
    """What to write for a directory given as the target (bare, or as file:, which is refused as
    no regular file): a file in it, which iolab creates (`iolab info` said "write file:DIR")."""
    inside = os.path.join(os.path.abspath(path), "iolab-test.img")
    return f"file:{inside}?size=8GiB (a file iolab creates in it) to test the drive it is on."


def _split_query(spec: str, text: str, allowed: set[str] | None) -> tuple[str, tuple[tuple[str, str], ...]]:
    base, sep, query = text.partition("?")
    if not sep:
        return base, ()
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise IolabError(
            f"target {spec!r}: cannot read the options after '?' ({query!r}); write them as key=value "
            f"joined by '&'. {_FORMS}"
        ) from None
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise IolabError(f"target {spec!r}: option {key!r} is given twice; give it once.")
        seen.add(key)
        if allowed is not None and key not in allowed:
            raise IolabError(
                f"target {spec!r}: unknown option {key!r}; this kind of target accepts "
                f"{', '.join(sorted(allowed)) or 'no options'}. {_FORMS}"
            )
    return base, tuple(pairs)


def parse_block(spec: str, text: str) -> Target:
    """A block device of this machine: its size is the device's own (sysfs), or ?size= up to it,
    which tests only the device's first part (as a file's or an export's ?size= does)."""
    text, options = _split_query(spec, text, {"size"})
    try:
        st = os.stat(text)
    except FileNotFoundError:
        raise IolabError(f"target {spec!r}: no such device {text}. List block devices with `lsblk`.") from None
    except OSError as e:
        raise IolabError(f"target {spec!r}: cannot stat {text}: {e.strerror}.") from None
    if not stat.S_ISBLK(st.st_mode):
        hint = ""
        if re.fullmatch(r"/dev/nvme\d+", text):
            hint = f" {text} is an NVMe controller; test one of its namespaces such as {text}n1."
        raise IolabError(f"target {spec!r}: {text} is not a block device.{hint} {_FORMS}")
    path = os.path.realpath(text)
    facts = device_facts(path)
    if not facts.capacity_bytes:
        raise IolabError(
            f"target {spec!r}: {path} reports a size of 0 bytes (an unattached loop device, an "
            "unconfigured zram or an empty drive bay?). Attach or configure it first."
        )
    given = _device_size_given(spec, options, path, "", facts.capacity_bytes)
    capacity = given or facts.capacity_bytes
    return Target(kind="block", spec=spec, path=path, capacity=capacity, facts=facts, options=options)


def _device_size_given(spec: str, options: tuple[tuple[str, str], ...], path: str, on: str, holds: int) -> int | None:
    """A block device's ?size= (None: not given), refused when larger than the device (`holds`
    bytes; `on`: ' on HOST' for a host's device): fio cannot go past the device's end, so the run
    would test less than it reports."""
    size = dict(options).get("size")
    if size is None:
        return None
    given = parse_size(size, what=f"target {spec!r}: size")
    if given > holds:
        raise IolabError(
            f"target {spec!r}: ?size={size} ({given:,} bytes) is larger than {path}{on}, which holds {holds:,} "
            f"bytes. Give ?size= of at most {holds:,} bytes, or leave it out to test the whole device."
        )
    return given


def parse_block_elsewhere(spec: str, text: str, elsewhere: Elsewhere) -> Target:
    """A block device another machine opens (a hosts run's host): its node is that machine's, so
    nothing of it is read here, where a node of that name is another drive (or none). Its size is
    the device's own as `lsblk` on the host says over SSH, or ?size= (there at most the device's);
    a host reached through fio's server alone can say nothing, so there ?size= is needed."""
    raw, options = _split_query(spec, text, {"size"})
    path = check_fio_value(os.path.normpath(raw), f"target {spec!r}: path")
    size = dict(options).get("size")
    given = parse_size(size, what=f"target {spec!r}: size") if size is not None else None
    if elsewhere.run is None:
        if given is None:
            raise _cannot_ask(spec, "device", elsewhere, _with_size(spec), "lsblk")
        return Target(kind="block", spec=spec, path=path, capacity=given, facts=DeviceFacts(), options=options)
    served = _host_device_size(spec, path, elsewhere)
    given = _device_size_given(spec, options, path, f" on {elsewhere.name}", served)
    facts = DeviceFacts(capacity_bytes=served, sources=("lsblk",))
    return Target(kind="block", spec=spec, path=path, capacity=given or served, facts=facts, options=options)


def _host_device_size(spec: str, path: str, elsewhere: Elsewhere) -> int:
    """The size of the block device `path` on `elsewhere`, asked with stat and lsblk there (lsblk
    finds the device by the node's device number, whatever the node is called)."""
    assert elsewhere.run is not None
    script = 'stat -L -c %F -- "$1" && lsblk -b -d -n -o SIZE -- "$1"'
    r = elsewhere.run(["sh", "-c", script, "sh", path], timeout=30)
    kind, _, size = r.text.strip().partition("\n")
    if r.ok and kind != "block special file":
        raise IolabError(
            f"target {spec!r}: {path} on {elsewhere.name} is a {kind}, not a block device. For a regular file "
            f"write file:{path}?size=8GiB."
        )
    if not r.ok or not size.strip().isdigit():
        raise IolabError(
            f"target {spec!r}: iolab could not read the size of {path} on {elsewhere.name} ({r.last_said}). List the host's "
            "block devices with `lsblk` there."
        )
    if int(size) == 0:
        raise IolabError(
            f"target {spec!r}: {path} on {elsewhere.name} reports a size of 0 bytes (an unattached loop device, an "
            "unconfigured zram or an empty drive bay?). Attach or configure it first."
        )
    return int(size)


def parse_file(spec: str, text: str) -> Target:
    text = text[len("file:") :]
    raw, options = _split_query(spec, text, {"size"})
    if not raw:
        raise IolabError(f"target {spec!r}: file: needs a path, e.g. file:/scratch/iolab.img?size=8GiB.")
    path = check_fio_value(os.path.abspath(os.path.expanduser(raw)), f"target {spec!r}: path")
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise IolabError(f"target {spec!r}: directory {parent} does not exist; create it or pick another path.")
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        what = file_type(st.st_mode)
        # the device's own name: a link elsewhere (/tmp/ll -> /dev/loop3) is no device target spec
        hint = (
            f" To test the device itself write {os.path.realpath(path)} as the target."
            if stat.S_ISBLK(st.st_mode)
            else f" Write {_in_directory(path)}"
            if stat.S_ISDIR(st.st_mode)
            else ""
        )
        raise IolabError(f"target {spec!r}: {path} is {what}, not a regular file.{hint}")
    size = dict(options).get("size")
    if size is not None:
        capacity = parse_size(size, what=f"target {spec!r}: size")
    elif st is not None and st.st_size > 0:
        capacity = st.st_size
    else:
        pseudo = pseudo_filesystem(path)
        if pseudo:  # /proc/self/mem reads as empty: a size would only lead to the same refusal (safety.py)
            raise RefusedError(
                f"target {spec!r}: {path} is on {pseudo}, where writes change the kernel, not a file. "
                "Nothing overrides this: choose another target."
            )
        state = "is empty" if st is not None else "does not exist yet"
        raise IolabError(f"target {spec!r}: {path} {state}, so its size must be given, e.g. file:{raw}?size=8GiB.")
    return Target(kind="file", spec=spec, path=path, capacity=capacity, facts=device_facts(path), options=options)


def parse_file_elsewhere(spec: str, text: str, elsewhere: Elsewhere) -> Target:
    """A file another machine opens (a hosts run's host): its path is that machine's, so nothing of
    it is read here, where a file of the same name (or its missing directory) is another machine's.
    Its size is ?size=, or the file's own as the host's `stat` says over SSH; a host reached through
    fio's server alone can say nothing, so there ?size= is needed."""
    raw, options = _split_query(spec, text[len("file:") :], {"size"})
    if not raw.startswith("/"):
        raise IolabError(
            f"target {spec!r}: a host's file needs an absolute path (a relative one, or ~, would be read on "
            "this machine), e.g. file:/scratch/iolab.img?size=8GiB."
        )
    path = check_fio_value(os.path.normpath(raw), f"target {spec!r}: path")
    size = dict(options).get("size")
    if size is not None:
        capacity = parse_size(size, what=f"target {spec!r}: size")
    else:
        capacity = _host_file_size(spec, raw, path, elsewhere)
    return Target(kind="file", spec=spec, path=path, capacity=capacity, facts=DeviceFacts(), options=options)


def _cannot_ask(spec: str, what: str, elsewhere: Elsewhere, sized: str, tool: str) -> IolabError:
    """The refusal of a spec whose size only its host could say (a file, a device, an export: `what`),
    when that host is reached through fio's server alone. `sized`: the spec with ?size= added."""
    return IolabError(
        f"target {spec!r}: the {what}'s size is needed, and iolab cannot ask {elsewhere.name}: that host is "
        f"reached through fio's server only (which runs jobs and says nothing of its files, devices or exports), "
        f"and this machine's answer would be of another {what}. Give the size, e.g. {sized}, or give the host an "
        f'`ssh = "user@host"` field in a hosts file (iolab then asks there with {tool}).'
    )


def _with_size(spec: str) -> str:
    return f"{spec}{'&' if '?' in spec else '?'}size=8GiB"


def _host_file_size(spec: str, raw: str, path: str, elsewhere: Elsewhere) -> int:
    """The size of the regular file `path` on `elsewhere`, asked with stat there."""
    given = f"Give it, e.g. file:{raw}?size=8GiB"
    if elsewhere.run is None:
        raise _cannot_ask(spec, "file", elsewhere, f"file:{raw}?size=8GiB", "stat")
    r = elsewhere.run(["stat", "-L", "-c", "%s %F", "--", path], timeout=30)
    size, _, kind = r.text.strip().partition(" ")
    if not r.ok or not size.isdigit():
        raise IolabError(
            f"target {spec!r}: iolab could not read the file's size on {elsewhere.name} ({r.last_said}). {given}."
        )
    if kind not in ("regular file", "regular empty file"):
        raise IolabError(f"target {spec!r}: {path} on {elsewhere.name} is a {kind}, not a regular file.")
    if int(size) == 0:
        raise IolabError(f"target {spec!r}: {path} on {elsewhere.name} is empty, so its size must be given. {given}.")
    return int(size)


NBD_PORT = 10809  # the NBD protocol's port


def nbd_uri(spec: str) -> str:
    """The export's URI, written one way, of an NBD spec (nbd://HOST:PORT/EXPORT, the port given,
    or nbd+unix:///EXPORT?socket=PATH): what fio's nbd engine is given, read without asking anyone."""
    text = check_text(spec, "target").strip()
    base, options = _split_query(spec, text, {"size", "socket"})
    return _nbd_uri(spec, base, dict(options))


def _nbd_uri(spec: str, base: str, opts: dict[str, str]) -> str:
    try:
        parts = urllib.parse.urlsplit(base)
        port = parts.port
    except ValueError as e:
        raise IolabError(f"target {spec!r}: cannot read the NBD address ({e}). {_FORMS}") from None
    export = parts.path.lstrip("/")
    if parts.scheme == "nbd":
        if not parts.hostname:
            raise IolabError(f"target {spec!r}: nbd:// needs a host, e.g. nbd://localhost:10809/export. {_FORMS}")
        if "socket" in opts:
            raise IolabError(f"target {spec!r}: socket= belongs to nbd+unix:///EXPORT?socket=PATH, not nbd://.")
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        uri = f"nbd://{host}:{port or NBD_PORT}/{export}"
    else:
        if parts.netloc:
            raise IolabError(f"target {spec!r}: nbd+unix:// takes no host; write nbd+unix:///EXPORT?socket=PATH.")
        if not opts.get("socket"):
            raise IolabError(f"target {spec!r}: nbd+unix:// needs ?socket=PATH (the server's Unix socket).")
        uri = f"nbd+unix:///{export}?socket={opts['socket']}"
    return check_fio_value(uri, f"target {spec!r}: NBD address")


def parse_nbd(spec: str, text: str, elsewhere: Elsewhere | None = None) -> Target:
    """`elsewhere`: the export as another machine reaches it, whose size is asked there."""
    base, options = _split_query(spec, text, {"size", "socket"})
    opts = dict(options)
    uri = _nbd_uri(spec, base, opts)
    given = parse_size(opts["size"], what=f"target {spec!r}: size") if "size" in opts else None
    served = _nbd_size(spec, uri, given is None, elsewhere)
    if served is None:
        # ?size= given and the server not reachable from where it was asked (a server not up yet,
        # which fio will then report), or on a host nothing can be asked on
        assert given is not None
        return Target(
            kind="nbd", spec=spec, path=uri, capacity=given, facts=DeviceFacts(interface="nbd"), options=options
        )
    if given is not None and given > served:
        # fio's nbd engine wraps offsets past the export's end: preconditioning and every figure
        # would be of a smaller range than the run says it tested
        raise IolabError(
            f"target {spec!r}: ?size={opts['size']} ({given:,} bytes) is larger than the export, which the "
            f"server says holds {served:,} bytes; fio would wrap every offset past its end, so the run "
            f"would test a smaller range than it reports. Give ?size= of at most {served:,} bytes (a smaller "
            "one tests only the export's first part), or leave it out to test the whole export."
        )
    facts = DeviceFacts(interface="nbd", capacity_bytes=served, sources=("nbdinfo",))
    capacity = served if given is None else given  # a smaller ?size= limits the tested range, as for files
    return Target(kind="nbd", spec=spec, path=uri, capacity=capacity, facts=facts, options=options)


def nbd_endpoints(uri: str, view: EndpointView | None = None) -> list[str]:
    """The server endpoints an NBD URI (a target's path, parse_nbd's form) reaches, each written
    one way whatever the spelling: the host resolved (getaddrinfo) to each of its addresses, every
    address of this machine (127.0.0.1, ::1, `localhost`, its interfaces' addresses) as
    `localhost`, the port given (default 10809) and the export name percent-decoded; a Unix socket by its real path. Two URIs that share an
    endpoint reach one export: the lock and the check for one target given twice key on these,
    which the URI's text (nbd://127.0.0.1:10812 beside nbd://localhost:10812) let two runs write
    at once. `view`: the URI as another machine reaches it (its resolution, its own addresses, its
    socket's real path), whose `localhost` is then that machine."""
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme == "nbd+unix":
        export, _, sock = uri[len("nbd+unix:///") :].partition("?socket=")
        real = view.socket if view is not None and view.socket else os.path.realpath(sock)
        return [f"nbd+unix://{real}/{urllib.parse.unquote(export.partition('?')[0])}"]
    export = urllib.parse.unquote(parts.path.lstrip("/"))
    port = parts.port or NBD_PORT
    name = (parts.hostname or "").lower()
    if view is not None:
        addresses = {a.split("%")[0] for a in view.addresses} or {name}
        return [
            f"nbd://{a}:{port}/{export}" for a in sorted({_endpoint_host(a, view.own.__contains__) for a in addresses})
        ]
    try:
        addresses = {str(info[4][0]).split("%")[0] for info in socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)}
    except OSError:  # not resolved here: reaching it fails too, unless ?size= spared asking it
        addresses = {name}
    return [f"nbd://{a}:{port}/{export}" for a in sorted({_endpoint_host(a, host.binds_here) for a in addresses})]


def _endpoint_host(address: str, own: Callable[[str], bool]) -> str:
    """`own`: whether the machine that reaches the address has it on one of its interfaces."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address  # a name that did not resolve
    if ip.is_loopback or (isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped and ip.ipv4_mapped.is_loopback):
        return "localhost"
    # An address of this machine's own interfaces (eth0's, a veth's) reaches the server a loopback
    # address reaches when it listens on every address (nbdkit's default), so it is one endpoint
    # with them: two runs by the two names would write one export. Two servers bound one to each
    # address are then taken for one, which refuses a run rather than letting two write one export.
    # The wildcard address reaches the machine's own servers too.
    if ip.is_unspecified or own(str(ip)):
        return "localhost"
    return f"[{ip}]" if ip.version == 6 else str(ip)


# nbdinfo --size's answer for each (machine, export URI) this process asked. A fleet reads one spec
# several times (its file, its duplicates, its identity), and each ask may wait 30 s for a server
# that does not answer. The key is the whole URI (host, port, export name or socket) on one
# machine, so another export is asked anew; tests that fake nbdinfo start with it empty.
NBD_SIZES: dict[tuple[str, str], host.CommandResult] = {}


def _nbdinfo_size(uri: str, elsewhere: Elsewhere | None) -> host.CommandResult:
    key = (elsewhere.name if elsewhere else "", uri)
    if key not in NBD_SIZES:
        run = elsewhere.run if elsewhere and elsewhere.run else host.run_command
        NBD_SIZES[key] = run(["nbdinfo", "--size", uri], timeout=30)
    return NBD_SIZES[key]


def _nbd_size(spec: str, uri: str, needed: bool, elsewhere: Elsewhere | None) -> int | None:
    """The export's size as its server says, asked where the export is reached (None: not
    reachable and not `needed`, ?size= given)."""
    on = f" on {elsewhere.name}" if elsewhere else ""
    sized = _with_size(spec)
    if elsewhere is not None and elsewhere.run is None:
        if not needed:
            return None
        raise _cannot_ask(spec, "export", elsewhere, sized, "nbdinfo")
    r = _nbdinfo_size(uri, elsewhere)
    if not needed and (r.missing or not r.ok):
        return None
    if r.missing:
        raise IolabError(
            f"target {spec!r}: the export's size is needed and nbdinfo (Debian package libnbd-bin) is "
            f"not installed{on} to ask the server; install it or give the size, e.g. {sized}."
        )
    if not r.ok or not r.text.strip().isdigit():
        raise IolabError(
            f"target {spec!r}: could not ask the NBD server{on} for the export's size ({r.summary()}). "
            "Check the server is running and the address is right, or give ?size=."
        )
    return int(r.text.strip())


def parse_sim(spec: str, text: str) -> Target:
    text = text[len("sim:") :]
    if "?" not in text and "&" in text:
        # A bare preset followed by &key=value (`--paths SPEC,SPEC&port=1` with SPEC a bare
        # preset): no preset name has '&', so the first one opens the options as '?' would.
        text = text.replace("&", "?", 1)
    preset, options = _split_query(spec, text, None)
    if not preset:
        raise IolabError(f"target {spec!r}: sim: needs a preset name, e.g. sim:PRESET. {_FORMS}")
    try:
        from iolab.targets.sim_facts import describe_target
    except ImportError as e:
        raise IolabError(
            f"target {spec!r}: the simulated drive is not available in this build ({e}). "
            "Test a block device or a file: target instead, or rebuild iolab with `bash scripts/setup`."
        ) from None
    capacity, facts = describe_target(preset, dict(options))
    return Target(kind="sim", spec=spec, path=preset, capacity=capacity, facts=facts, options=options)
