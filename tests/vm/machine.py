"""Boot a real Linux kernel (QEMU through virtme-ng) with emulated NVMe, SATA and SCSI drives on
sparse image files, and run tests/vm/guest.py inside it. The guest sees the host's root
filesystem read-only, so this repository's venv, fio, nvme-cli, hdparm and sg3-utils are there;
the work directory is shared read-write for the results. Python's own files come in on disks
of their own (python_image).

Used by the VM tests (one boot per pytest session) and by scripts/vm-drives.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MiB = 1 << 20
# per namespace/disk: small, since TCG IO is slow; each run writes twice its drive before it
# measures (WIPC), so the size sets most of a run's IO (256 MiB took ~45 s of a SCSI run's purge
# and preconditioning); two zones still fit
IMAGE = 128 * MiB
ZONE = 64 * MiB


@dataclass(frozen=True)
class Image:
    name: str
    prepare: tuple[tuple[str, ...], ...] = ()  # commands run on the image file ({} is its path)
    keep: bool = False  # the tests check that the guest left it bit-identical


# What each image holds before boot; what the guest must leave alone is `keep`.
IMAGES = (
    Image("nvme"),
    Image("nvme2-ns1", (("mkfs.ext4", "-q", "-F", "-L", "iolab-vm", "{}"),), keep=True),  # mounted in the guest
    Image("nvme2-ns2"),
    Image("dual"),
    Image("zoned"),
    Image("sata"),
    Image("sata-parted", keep=True),  # an MBR partition table with one partition (written below)
    Image("scsi"),
    Image("scsi-fs", (("mkfs.ext4", "-q", "-F", "{}"),), keep=True),  # a filesystem, no partition table
)
SBIN_ENV = dict(os.environ, PATH=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")  # mkfs, sfdisk


def qemu_options(d: Path) -> list[str]:
    """The controllers and drives, each named by a serial the guest script looks for."""

    # QEMU's default thread pool for the drives' IO: aio=io_uring was tried (at load ~15 the pool's
    # wake-ups took QEMU's main thread more CPU than both vCPUs), but on a quiet machine the whole
    # VM test took 334 CPU-s with it and 294 without (2026-12-01, one run each, back to back)
    def drive(name: str, extra: str = "") -> list[str]:
        opts = f"if=none,id={name},format=raw,discard=unmap{extra}"
        return ["-drive", f"file={d / (name + '.img')},{opts}"]

    return [
        # one NVMe controller, one namespace
        *drive("nvme"),
        "-device",
        "nvme,serial=IOLABNV1,drive=nvme",
        # one controller, two namespaces: the first is mounted, the second free
        "-device",
        "nvme,id=nvc2,serial=IOLABNV2",
        *drive("nvme2-ns1"),
        "-device",
        "nvme-ns,drive=nvme2-ns1,bus=nvc2,nsid=1",
        *drive("nvme2-ns2"),
        "-device",
        "nvme-ns,drive=nvme2-ns2,bus=nvc2,nsid=2",
        # an NVM subsystem with two controllers sharing one namespace (QEMU wants one serial)
        "-device",
        "nvme-subsys,id=dual,nqn=iolab-dual",
        "-device",
        "nvme,id=nvc3,serial=IOLABDP1,subsys=dual",
        "-device",
        "nvme,id=nvc4,serial=IOLABDP1,subsys=dual",
        *drive("dual"),
        "-device",
        "nvme-ns,drive=dual,bus=nvc3,nsid=1,shared=on",
        # a zoned (ZNS) namespace
        "-device",
        "nvme,id=nvc5,serial=IOLABZN1",
        *drive("zoned"),
        "-device",
        f"nvme-ns,drive=zoned,bus=nvc5,nsid=1,zoned=true,zoned.zone_size={ZONE // MiB}M",
        # SATA disks on an AHCI controller
        "-device",
        "ahci,id=ahci0",
        *drive("sata"),
        "-device",
        "ide-hd,drive=sata,bus=ahci0.0,serial=IOLABSA1",
        *drive("sata-parted"),
        "-device",
        "ide-hd,drive=sata-parted,bus=ahci0.1,serial=IOLABSA2",
        # SCSI disks on a MegaRAID SAS controller
        "-device",
        "megasas,id=sas0",
        *drive("scsi"),
        "-device",
        "scsi-hd,drive=scsi,bus=sas0.0,scsi-id=0,serial=IOLABSC1",
        *drive("scsi-fs"),
        "-device",
        "scsi-hd,drive=scsi-fs,bus=sas0.0,scsi-id=1,serial=IOLABSC2",
    ]


# the standard library's parts no `iolab` imports (its own tests are half its size)
STDLIB_UNUSED = shutil.ignore_patterns(
    "site-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3"
)


# The programs the guest starts again and again (iolab's and guest.py's tools): from the 9p root
# share each start read the binary and every library it links anew (the share caches nothing;
# fio links 64 libraries).
GUEST_TOOLS = (
    *("fio", "nvme", "smartctl", "hdparm", "sdparm", "blkid", "blkdiscard", "wipefs", "lsblk", "mount", "dmesg"),
    *("sg_format", "sg_modes", "sg_sanitize", "sg_wr_mode", "sg_inq", "sg_readcap", "sg_vpd"),
)


def tool_files() -> set[Path]:
    """The Python interpreter and GUEST_TOOLS, each with the shared libraries it links (as the
    dynamic loader lists them for ldd), by their real paths."""
    found: set[Path] = set()
    for exe in [sys.executable, *filter(None, (shutil.which(t, path=SBIN_ENV["PATH"]) for t in GUEST_TOOLS))]:
        found.add(Path(exe).resolve())
        env = dict(SBIN_ENV, LD_TRACE_LOADED_OBJECTS="1")  # the loader prints the libraries, runs nothing
        listed = subprocess.run([exe], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL).stdout
        found.update(Path(m).resolve() for m in re.findall(r"(/\S+) \(0x", listed))
    return {f for f in found if f.is_file()}


def python_files() -> list[Path]:
    """What every `iolab` in the guest reads at its start: the interpreter's shared library (tens
    of MB where Python is built with one), the standard library (not its site-packages: the venv
    has its own), the venv and iolab's source; then the tool_files() it runs."""
    lib = Path(sysconfig.get_config_var("LIBDIR") or "/nonexistent") / (sysconfig.get_config_var("INSTSONAME") or "-")
    trees = [*([lib] if lib.is_file() else []), Path(sysconfig.get_paths()["stdlib"]), REPO / ".venv", REPO / "src"]
    return trees + sorted(tool_files() - set(trees))


def python_image(d: Path) -> list[str]:
    """python_files() copied into one read-only ext4 image (under their absolute paths) on a
    virtio disk; guest.py mounts it and binds each over its path before any check. Read over the
    9p share instead, nothing is cached: each Python start read its 23 MB libpython again (11 s
    for `python -c pass` in the guest on a loaded machine) and each module took several round
    trips (74 s for `import iolab.cli.main`), and every check starts `iolab` at least once. Returns
    the QEMU options; d/out/python.json lists the paths for the guest."""
    stage = d / "python"
    stdlib = Path(sysconfig.get_paths()["stdlib"])

    def link(src: str, dst: str) -> None:  # hard links where the tree is on the same filesystem
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    for path in python_files():
        into = stage / path.relative_to("/")
        into.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(
                path, into, symlinks=True, copy_function=link, ignore=STDLIB_UNUSED if path == stdlib else None
            )
        else:
            link(str(path), str(into))
    blocks = files = 0
    for root, dirs, names in os.walk(stage):
        for n in dirs + names:
            blocks += os.lstat(os.path.join(root, n)).st_blocks
            files += 1
    img = d / "python.img"
    with open(img, "wb") as f:
        f.truncate(blocks * 512 * 5 // 4 + 32 * MiB)
    subprocess.run(
        ["mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-N", str(files * 2 + 1024), "-d", str(stage), str(img)],
        check=True,
        capture_output=True,
        env=SBIN_ENV,
    )
    shutil.rmtree(stage)
    (d / "out" / "python.json").write_text(json.dumps({"serial": "IOLABPY", "paths": [str(p) for p in python_files()]}))
    return [
        "-drive",
        f"file={img},if=none,id=python,format=raw,readonly=on",
        "-device",
        "virtio-blk-pci,drive=python,serial=IOLABPY",
    ]


def kernel() -> Path | None:
    """The newest installed kernel image (Debian's linux-image-amd64)."""
    found = sorted(Path("/boot").glob("vmlinuz-*"))
    return found[-1] if found else None


def vng() -> str | None:
    """virtme-ng: $IOLAB_VNG, the test-only venv scripts/test makes, or PATH."""
    for cand in (os.environ.get("IOLAB_VNG"), str(REPO / ".vm-venv" / "bin" / "vng"), shutil.which("vng")):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def missing() -> str | None:
    """Why the VM cannot boot here (None: it can)."""
    if os.geteuid() != 0:
        return "needs root (vng shares the host's root filesystem with the guest)"
    if not shutil.which("qemu-system-x86_64"):
        return "QEMU is not installed (apt-get install qemu-system-x86; scripts/test installs it)"
    if kernel() is None:
        return "no kernel image in /boot (apt-get install linux-image-amd64)"
    if vng() is None:
        return "virtme-ng is not installed (scripts/test puts it in .vm-venv)"
    if not static_busybox():
        return "no statically linked busybox, which vng puts in its initramfs (apt-get install busybox-static; scripts/vm-deps installs it)"
    return None


def static_busybox() -> bool:
    """vng takes the first of these on PATH and stops unless it is statically linked (Debian's
    `busybox` is dynamic): an ELF without a PT_INTERP program header needs no loader."""
    path = next(filter(None, map(shutil.which, ("busybox-static", "busybox.static", "busybox"))), None)
    if path is None:
        return False
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit ELF only (an x86-64 host)
        return False
    phoff, phentsize, phnum = struct.unpack_from("<Q", head, 0x20)[0], *struct.unpack_from("<HH", head, 0x36)
    return all(struct.unpack_from("<I", head, phoff + i * phentsize)[0] != 3 for i in range(phnum))  # 3: PT_INTERP


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(4 * MiB):
            h.update(block)
    return h.hexdigest()


def write_mbr(path: Path) -> None:
    """A DOS partition table with one Linux partition (sectors 2048 to 64 MiB), no tool needed."""
    entry = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, 64 * MiB // 512 - 2048)
    with open(path, "r+b") as f:
        f.seek(446)
        f.write(entry)
        f.seek(510)
        f.write(b"\x55\xaa")


def make_images(d: Path) -> dict[str, str]:
    """Sparse images; returns the checksums of those the guest must not change."""
    sums = {}
    for img in IMAGES:
        path = d / f"{img.name}.img"
        with open(path, "wb") as f:
            f.truncate(IMAGE)
        for cmd in img.prepare:
            subprocess.run([a.replace("{}", str(path)) for a in cmd], check=True, capture_output=True, env=SBIN_ENV)
        if img.name == "sata-parted":
            write_mbr(path)
        if img.keep:
            sums[img.name] = sha256(path)
    return sums


# vng gives the guest six virtio-serial-pci devices (its stdin, stdout, stderr, ...), one port
# each, but every device is made for 31 ports: 64 virtqueues, each with an eventfd that QEMU's
# main loop polls on every wakeup (~500 a second, strace): with ~400 eventfds, most of the main
# thread's time (perf: ppoll, eventfd_poll; several % of all QEMU's). Two ports (port 0 stays
# reserved for a console) and no ioeventfd (under TCG the CPU thread can handle the
# notification itself) leave ~90 fds in all.
QUIET_SERIAL = ["-global", "virtio-serial-pci.max_ports=2", "-global", "virtio-serial-pci.ioeventfd=off"]
# The emulated CPU: vng asks QEMU for `-cpu max`, every feature TCG emulates (AVX2, AES-NI,
# PCLMUL, VMX): udev then loads the crypto and KVM modules for them, and glibc, fio's libraries
# and numpy take their AVX2 code paths, each such instruction emulated. Nehalem is x86-64-v2,
# the venv's numpy's baseline (QEMU takes the last -cpu it is given). `pytest tests/vm`, all 28
# passed each time (2026-12-02): 349 CPU-s with `-cpu max` at load 4; 296 with Nehalem at load 7-9.
GUEST_CPU = ["-cpu", "Nehalem"]
# The guest kernel is the drivers' host here, not what is measured: its speculative-execution
# mitigations only add work to every system call and context switch of the emulated CPUs.
# Nor its crypto self-tests: udev loads the AES-NI and GHASH modules for the CPU QEMU's `-cpu max`
# describes, and the kernel tests every algorithm they register before the boot goes on, AES-NI
# and carry-less multiplies emulated instruction by instruction: 14 s and 6 s of a boot's 69 s
# before the guest script starts (initcall_debug, 2026-12-02). iolab uses no kernel crypto.
# Multipath off: one block device per controller path.
KERNEL_ARGS = "nvme_core.multipath=N mitigations=off cryptomgr.notests"


# What virtme-ng's guest mounts an empty tmpfs over: a repository below one is not there unless
# it is handed to the guest (read-only) on its own.
GUEST_TMPFS = (Path("/tmp"), Path("/var/tmp"), Path("/var/log"))


def repo_share() -> list[str]:
    hidden = any(p == REPO or p in REPO.parents for p in GUEST_TMPFS)
    return ["--rodir", str(REPO)] if hidden else []


def boot(d: Path, cpus: int | None = None, timeout: float = 7200, checks: tuple[str, ...] = ()) -> dict:
    """Make the images in `d`, boot once, run the guest script (its results in d/out, the
    console in d/console.log); returns what the host saw, also kept in d/host.json: vng's exit
    status, seconds, the kept images' checksums before and after."""
    before = make_images(d)
    out = d / "out"
    out.mkdir(exist_ok=True)
    cpus = cpus or int(os.environ.get("IOLAB_VM_CPUS", "2"))
    py = REPO / ".venv" / "bin" / "python"
    argv = [
        vng(),
        "--run",
        str(kernel()),
        "--disable-kvm",
        "--memory",
        "2G",
        "--cpus",
        str(cpus),
        "--append",
        KERNEL_ARGS,
        "--rwdir",
        str(d),
        *repo_share(),
        "--qemu-opts=" + " ".join(QUIET_SERIAL + GUEST_CPU + qemu_options(d) + python_image(d)),
        "--exec",
        " ".join([str(py), str(REPO / "tests" / "vm" / "guest.py"), str(out), *checks]),
    ]
    env = dict(os.environ, PATH=f"{Path(argv[0]).parent}:{os.environ.get('PATH', '')}")
    t0 = time.monotonic()
    with open(d / "console.log", "w") as log:
        try:
            rc = subprocess.run(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, timeout=timeout, cwd=d
            ).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    packed = out / "runs.tar"  # the guest's runs directories, packed (guest.py says why)
    if packed.exists():
        with tarfile.open(packed) as tar:
            _extract_data(tar, out)
        packed.unlink()
    after = {name: sha256(d / f"{name}.img") for name in before}
    host = {"rc": rc, "seconds": round(time.monotonic() - t0), "sums_before": before, "sums_after": after}
    (d / "host.json").write_text(json.dumps(host, indent=1))
    return host


def _extract_data(tar: tarfile.TarFile, out: Path) -> None:
    """The guest's runs, with tarfile's "data" filter: only files and directories, inside `out`.
    Debian 12's Python (3.11.2) predates the filter (3.11.4), so there the same refusal is made
    member by member first."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(out, filter="data")
        return
    for m in tar.getmembers():
        if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in Path(m.name).parts:
            raise RuntimeError(f"the guest's runs.tar holds {m.name!r}, not a plain file or directory inside it")
    tar.extractall(out)  # noqa: S202  # every member checked above


if __name__ == "__main__":
    where = Path(sys.argv[1])
    where.mkdir(parents=True, exist_ok=True)
    print(json.dumps(boot(where, checks=tuple(sys.argv[2:])), indent=1))  # [CHECK...]: only these (debugging)
