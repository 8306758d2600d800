"""Every external program iolab or its tests run is installed by scripts/setup or scripts/vm-deps.

The VM tests once failed on a fresh Debian 12 machine because vng needs a statically linked
busybox that no script installed; CI passed only because its machine already had one. Here the
programs are read from the code itself (the first word of each command a subprocess call or
`run_command` is given, and each `shutil.which` name), each must be in PROGRAMS with its Debian
package, and each package must be in a script's package list (or be Essential, always installed).
A new tool call therefore fails this test until its package is named and installed. Where a
package is installed on this machine, dpkg must agree that it owns the program, so the table
cannot name the wrong package either.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# program -> the Debian package that provides it ("pip:NAME": installed with pip by the script)
PROGRAMS = {
    # the product (src/iolab)
    "fio": "fio",
    "nvme": "nvme-cli",
    "hdparm": "hdparm",
    "sdparm": "sdparm",
    "smartctl": "smartmontools",
    "sg_format": "sg3-utils",
    "sg_modes": "sg3-utils",
    "sg_sanitize": "sg3-utils",
    "sg_wr_mode": "sg3-utils",
    "blkid": "util-linux",
    "blkdiscard": "util-linux",
    "wipefs": "util-linux",
    "lsblk": "util-linux",
    "fallocate": "util-linux",
    "nbdinfo": "libnbd-bin",
    "blktrace": "blktrace",
    "mount": "mount",
    "ssh": "openssh-client",
    "stat": "coreutils",
    # the tests
    "sg_inq": "sg3-utils",
    "sg_readcap": "sg3-utils",
    "sg_vpd": "sg3-utils",
    "nbdkit": "nbdkit",
    "losetup": "mount",
    "umount": "mount",
    "swapon": "mount",
    "swapoff": "mount",
    "mkswap": "util-linux",
    "partx": "util-linux",
    "flock": "util-linux",
    "setpriv": "util-linux",
    "unshare": "util-linux",
    "dmesg": "util-linux",
    "mkfs.ext4": "e2fsprogs",
    "ip": "iproute2",
    "pgrep": "procps",
    "ssh-keygen": "openssh-client",
    "sshd": "openssh-server",
    "chromium": "chromium",
    "chromedriver": "chromium-driver",
    "dd": "coreutils",
    "sleep": "coreutils",
    "true": "coreutils",
    "sh": "dash",
    "dpkg": "dpkg",  # this test
    "qemu-system-x86_64": "qemu-system-x86",
    "vng": "pip:virtme-ng",
}
# What virtme-ng 1.42 itself runs (its source: mkinitramfs.find_busybox, run.is_statically_linked, install_modules,
# guest/virtme-init), which no line of ours names: the code scan cannot find them.
VNG_RUNS = {
    "busybox": "busybox-static",  # statically linked: Debian's `busybox` is dynamic and vng refuses it
    "file": "file",  # is_statically_linked: `file -L` of busybox (a fresh Debian 12 has no `file`)
    "zstd": "zstd",  # unpacks .ko.zst kernel modules for the initramfs
    "udevadm": "udev",  # the guest boots from this machine's root filesystem
    "systemd-udevd": "udev",
}
# First words of command lists in the code that are not programs iolab runs.
NOT_PROGRAMS = {
    "TC1/QD1": "a label in a compare test's table, not a command",
    "iolab-no-such-tool-xyz": "the tool a test uses to show a missing tool is reported",
}
# Debian's Essential packages are on every Debian system (dpkg refuses to remove them).
ESSENTIAL = {"coreutils", "dash", "util-linux", "dpkg"}

RUNNERS = {"run", "Popen", "check_output", "check_call", "call"}


def _word(node: ast.AST, consts: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    return None


@functools.cache
def called_programs() -> dict[str, set[str]]:
    """program -> the files that run it: the first word of every command list handed to a
    subprocess call or run_command, or returned by a function that builds commands, and every
    shutil.which() name (a module-level string constant counts as its value)."""
    found: dict[str, set[str]] = {}
    files = {
        f: ast.parse(f.read_text(), str(f))
        for f in sorted([*(REPO / "src").rglob("*.py"), *(REPO / "tests").rglob("*.py")])
    }
    # our own helpers that run the command they are given (run_command(argv), the guest's sh(argv), ...)
    runners = RUNNERS | {
        n.name
        for tree in files.values()
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and n.args.args and n.args.args[0].arg in ("argv", "cmd")
    }
    # and a local name for one of them (`ask = run or host.run_command`)
    runners |= {
        t.id
        for tree in files.values()
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and any(isinstance(v, ast.Attribute) and v.attr in runners for v in ast.walk(n.value))
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    for f, tree in files.items():
        consts = {
            t.id: n.value.value
            for n in tree.body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        for n in tree.body:  # CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
            if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Tuple) and isinstance(n.value, ast.Tuple):
                for t, v in zip(n.targets[0].elts, n.value.elts):
                    if isinstance(t, ast.Name) and isinstance(v, ast.Constant) and isinstance(v.value, str):
                        consts[t.id] = v.value
        lists: list[ast.AST] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if fn == "which":
                    lists.append(ast.List(elts=[node.args[0]]))
                elif fn in runners:
                    lists.append(node.args[0])
            elif isinstance(node, ast.FunctionDef) and "command" in node.name:
                lists += [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None]
        for cmd in lists:
            if isinstance(cmd, (ast.List, ast.Tuple)) and cmd.elts:
                word = _word(cmd.elts[0], consts)
                if word:
                    name = Path(word).name if word.startswith("/") else word
                    found.setdefault(name, set()).add(str(f.relative_to(REPO)))
    return found


def script_packages() -> set[str]:
    """Every package named in an apt_pkgs=(...) list of scripts/setup and scripts/vm-deps, and
    the pip packages they install (as pip:NAME)."""
    pkgs: set[str] = set()
    for name in ("setup", "vm-deps"):
        text = (REPO / "scripts" / name).read_text()
        start = text.find("\napt_pkgs=(")
        assert start >= 0, f"scripts/{name}: no apt_pkgs=(...) list"
        for line in text[start + len("\napt_pkgs=(") :].splitlines():
            code = line.split("#")[0]  # a comment may hold parentheses, the list's code does not
            pkgs.update(code.split(")")[0].split())
            if ")" in code:
                break
        pkgs.update(f"pip:{p}" for p in re.findall(r'pip install -q "?([A-Za-z0-9_.-]+?)(?:==[^"\s]*)?"?$', text, re.M))
    return pkgs


def test_the_scan_finds_the_calls_it_must():
    # the scan itself can fail: these are called in each of its forms (a list literal, a
    # which() of a constant, a command-building function, run_command, a path)
    found = called_programs()
    for prog in (
        "fio",
        "nvme",
        "smartctl",
        "sg_format",
        "nbdkit",
        "chromium",
        "ssh",
        "sshd",
        "vng",
        "qemu-system-x86_64",
    ):
        assert prog in found, f"the scan no longer sees {prog}"


def test_every_program_called_is_in_the_table():
    found = called_programs()
    unknown = {p: sorted(fs) for p, fs in found.items() if p not in PROGRAMS and p not in NOT_PROGRAMS}
    assert not unknown, (
        "programs the code runs that PROGRAMS does not name (add each with its Debian package, and the "
        f"package to scripts/setup or scripts/vm-deps): {unknown}"
    )
    stale = sorted(set(PROGRAMS) - set(found))
    assert not stale, f"PROGRAMS names programs no code runs any more: {stale}"


def test_every_package_is_installed_by_a_script():
    have = script_packages() | ESSENTIAL
    for table in (PROGRAMS, VNG_RUNS):
        missing = {prog: pkg for prog, pkg in table.items() if pkg not in have}
        assert not missing, f"no script installs the package of: {missing}"


def test_the_vm_deps_check_each_piece_vng_needs():
    text = (REPO / "scripts" / "vm-deps").read_text()
    for prog in [*VNG_RUNS, "qemu-system-x86_64", "vng"]:
        assert prog in text.split("# What the boot needs")[1], f"scripts/vm-deps does not check {prog}"
    assert "ldd" in text, "scripts/vm-deps must check that busybox is statically linked"


def test_dpkg_agrees_where_the_package_is_installed():
    table = {**{p: k for p, k in PROGRAMS.items() if not k.startswith("pip:")}, **VNG_RUNS}
    del table["dpkg"]  # dpkg -S of dpkg: lines of its own
    try:
        out = subprocess.run(
            ["dpkg", "-S", *(f"bin/{p}" for p in table)], capture_output=True, text=True, timeout=120
        ).stdout
    except FileNotFoundError:
        pytest.skip("not a Debian system (no dpkg)")
    owners: dict[str, set[str]] = {}
    for line in out.splitlines():
        pkgs, _, path = line.partition(": ")
        m = re.fullmatch(r"/(?:usr/)?(?:s?bin|lib/systemd)/([^/]+)", path.strip())
        if m and not pkgs.startswith("diversion"):
            owners.setdefault(m.group(1), set()).update(p.strip() for p in pkgs.split(","))
    wrong = {p: (table[p], sorted(owners[p])) for p in table if p in owners and table[p] not in owners[p]}
    assert not wrong, f"the table names another package than dpkg (program: (table, dpkg)): {wrong}"
    assert owners, "dpkg knows none of the programs: the check above checked nothing"
