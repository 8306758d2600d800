"""The load-generating hosts of a scale-out run as the user lists them: `--hosts` addresses and
the `--hosts-file` TOML tables, parsed and checked into `Host`s (what hosts.py starts servers on)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.ioengines import JOB_IOENGINES
from iolab.core.safefile import loads_toml, read_text
from iolab.core.usertext import check_fio_value, check_text

DEFAULT_PORT = 8765  # fio's own default server port


_ADDR_RE = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9._-]+))(?::(?P<port>\d+))?$")
FILE_FIELDS = {"address", "port", "target", "share", "ssh", "ssh_config", "ioengine"}
# A host's `ioengine` goes into its fio job file as written: fio's `external:/path/lib.so` loads a
# library into the (root) fio server and `exec` runs a program, so only the engines iolab's own
# `--ioengine` names reach a job (`auto` is not one: it is decided by probing this host's fio).
HOST_IOENGINES = JOB_IOENGINES  # the engines a job file names (core/ioengines.py)


@dataclass(frozen=True)
class Host:
    """One load generator. `target`: the path its fio opens (None: the run's target path);
    `share`: its weight in the split of the outstanding IO; `ssh`: user@host to start the
    server over SSH (each run's server then listens on a Unix socket of its own there, reached by
    a tunnel, so `port` only names the host: engines/hosts.py); `ssh_config`: an ssh_config(5)
    file for that ssh (port, key, known hosts), else ssh's own."""

    address: str
    port: int = DEFAULT_PORT
    target: str | None = None
    share: float = 1.0
    ssh: str | None = None
    ioengine: str = "libaio"  # the remote host's io_uring support is not probed
    ssh_config: str | None = None

    @property
    def name(self) -> str:
        return f"{self.address}:{self.port}"

    @property
    def machine(self) -> str:
        """The machine the host's drives are on, as a drive's key names it: a host reached over
        SSH is the machine its SSH destination (with its ssh_config) reaches, whose `address` is
        only a label (two port forwards to 127.0.0.1 are two machines); another host, its address."""
        if self.ssh:
            return f"{self.ssh} over SSH" + (f" with {self.ssh_config}" if self.ssh_config else "")
        return self.address


def parse_hosts(text: str) -> list[Host]:
    """`--hosts h1,h2:8766,[fd00::1]`: equal shares, the run's target path on each."""
    hosts = [_parse_address(item.strip(), "--hosts") for item in text.split(",") if item.strip()]
    if not hosts:
        raise IolabError("--hosts: no host given; list addresses separated by commas (e.g. --hosts 10.0.0.2,10.0.0.3).")
    return _unique(hosts, "--hosts")


def _parse_address(item: str, where: str) -> Host:
    m = _ADDR_RE.match(item)
    if not m:
        raise IolabError(f"{where}: {item!r} is not a host address (give HOST or HOST:PORT, IPv6 as [ADDR]:PORT).")
    port = int(m.group("port") or DEFAULT_PORT)
    if not 0 < port < 65536:
        raise IolabError(f"{where}: port {port} of {item!r} is not a TCP port (1-65535).")
    return Host(address=m.group("v6") or m.group("host"), port=port)


def _unique(hosts: list[Host], where: str) -> list[Host]:
    seen = set()
    for h in hosts:
        if h.name in seen:
            raise IolabError(
                f"{where}: host {h.name} is listed twice; give each fio server once (use `share` to weight one)."
            )
        seen.add(h.name)
    return hosts


def load_hosts_file(path: Path) -> list[Host]:
    """A TOML file of `[[host]]` tables: address (required), port, target, share, ssh, ioengine."""
    try:
        text = read_text(path, "hosts file", "config")
    except OSError as e:
        raise IolabError(f"hosts file {path}: cannot read it ({e.strerror or e}).") from None
    data = loads_toml(text, f"hosts file {path}")
    tables = data.get("host")
    if not isinstance(tables, list) or not tables or set(data) != {"host"}:
        raise IolabError(
            f"hosts file {path}: expected one or more [[host]] tables and nothing else "
            f"(found {', '.join(sorted(data)) or 'nothing'})."
        )
    starts = [i + 1 for i, line in enumerate(text.splitlines()) if line.strip().startswith("[[host]]")]
    hosts = []
    for i, t in enumerate(tables):
        where = f"hosts file {path}, line {starts[i] if i < len(starts) else '?'} ([[host]] #{i + 1})"
        hosts.append(host_from_table(t, where))
    return _unique(hosts, f"hosts file {path}")


def host_from_table(t: dict, where: str, extra: frozenset[str] = frozenset()) -> Host:
    """One `[[host]]` table checked into a Host (`where` starts every message; `extra`: fields
    the caller reads itself, e.g. a fleet file's labels and drives)."""
    unknown = set(t) - FILE_FIELDS - extra
    if unknown:
        raise IolabError(
            f"{where}: unknown field {sorted(unknown)[0]!r}; fields are {', '.join(sorted(FILE_FIELDS | extra))}."
        )
    if not isinstance(t.get("address"), str):
        raise IolabError(f"{where}: field 'address' is missing or not a string.")
    port = t.get("port", 1)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        # a port in quotes ("8765") passed as the text it is joined into the address with
        raise IolabError(
            f"{where}: field 'port' is {json.dumps(port) if isinstance(port, str) else repr(port)}; give a whole "
            "number from 1 to 65535 (without quotes)."
        )
    h = _parse_address(t["address"] + (f":{t['port']}" if "port" in t else ""), f"{where}, field 'address'/'port'")
    share = t.get("share", 1.0)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not share > 0:
        raise IolabError(f"{where}: field 'share' is {share!r}; give a number greater than 0.")
    for key in ("target", "ssh", "ssh_config", "ioengine"):
        if key in t and (not isinstance(t[key], str) or not t[key]):
            raise IolabError(f"{where}: field {key!r} must be a non-empty string.")
        if key in t:
            check_text(t[key], f"{where}: field {key!r}")
    _check_job_fields(t, where)
    if "ssh_config" in t and "ssh" not in t:
        raise IolabError(f"{where}: field 'ssh_config' needs field 'ssh' (the user@host to start the fio server on).")
    return Host(
        h.address, h.port, t.get("target"), float(share), t.get("ssh"), t.get("ioengine", "libaio"), t.get("ssh_config")
    )


def _check_job_fields(t: dict, where: str) -> None:
    """The same rules for the fields that reach a fio job file or an ssh command line as for the
    command line's own: an engine from the allow-list, a target fio reads back as written, an
    ssh destination that ssh cannot take for an option (`-oProxyCommand=...` runs a program)."""
    if "ioengine" in t and t["ioengine"] not in HOST_IOENGINES:
        raise IolabError(
            f"{where}: field 'ioengine' is {t['ioengine']!r}; use {' or '.join(HOST_IOENGINES)} (a host's engine "
            "is written into its fio job as given, so no other engine is taken). Nothing was run or written."
        )
    if "target" in t:
        check_fio_value(t["target"], f"{where}: field 'target'")
    if "ssh" in t and t["ssh"].startswith("-"):
        raise IolabError(
            f"{where}: field 'ssh' is {t['ssh']!r}; give user@host or host (a value starting with '-' "
            "would be an ssh option). Nothing was run or written."
        )
