"""Target specs, file-target safety and file preparation (real files in tmp, no root)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import types

import pytest

from iolab import targets
from iolab.core.errors import IolabError, RefusedError
from iolab.targets import CommandResult, DeviceFacts, Target, host, parse_target


def _result(argv, rc=0, out="", err=""):
    return CommandResult(tuple(argv), rc, out.encode(), err)


# --- file: ---------------------------------------------------------------------------------


def test_new_file_with_size(tmp_path):
    t = parse_target(f"file:{tmp_path}/scratch.img?size=8GiB")
    assert t.kind == "file"
    assert t.path == str(tmp_path / "scratch.img")
    assert t.capacity == 8 * 1024**3
    assert t.option("size") == "8GiB"
    assert t.facts.interface == "file"
    assert t.facts.capacity_bytes is None  # nothing there yet: not reported, not guessed


def test_existing_file_size_is_used_when_no_size_given(tmp_path):
    f = tmp_path / "old.img"
    f.write_bytes(b"x" * 12288)
    t = parse_target(f"file:{f}")
    assert t.capacity == 12288
    assert t.facts.capacity_bytes == 12288


def test_size_option_wins_over_existing_size(tmp_path):
    f = tmp_path / "old.img"
    f.write_bytes(b"x" * 4096)
    assert parse_target(f"file:{f}?size=1MB").capacity == 1_000_000


def test_relative_file_path_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert parse_target("file:rel.img?size=1MiB").path == str(tmp_path / "rel.img")


@pytest.mark.parametrize(
    "spec_tail, words",
    [
        ("new.img", ["does not exist yet", "size="]),
        ("new.img?size=lots", ["cannot read 'lots' as a size"]),
        ("new.img?size=1GiB&sise=2", ["unknown option 'sise'", "size"]),
        ("new.img?size=1GiB&size=2GiB", ["given twice"]),
        ("new.img?size", ["cannot read the options"]),
        ("nodir/new.img?size=1GiB", ["does not exist", "nodir"]),
    ],
)
def test_bad_file_specs(tmp_path, spec_tail, words):
    with pytest.raises(IolabError) as e:
        parse_target(f"file:{tmp_path}/{spec_tail}")
    for w in words:
        assert w in str(e.value)


def test_empty_existing_file_needs_size(tmp_path):
    (tmp_path / "empty.img").touch()
    with pytest.raises(IolabError, match="is empty"):
        parse_target(f"file:{tmp_path}/empty.img")


def test_file_spec_on_directory_or_device_is_refused_with_hint(tmp_path):
    with pytest.raises(IolabError, match="is a directory"):
        parse_target(f"file:{tmp_path}?size=1GiB")
    with pytest.raises(IolabError, match="character device"):
        parse_target("file:/dev/null?size=1GiB")


def test_bare_path_suggests_file_prefix(tmp_path):
    with pytest.raises(IolabError) as e:
        parse_target(f"{tmp_path}/x.img")
    assert f"file:{tmp_path}/x.img" in str(e.value)
    assert "Accepted forms" in str(e.value)


@pytest.mark.parametrize("spec", ["", "sdb", "http://x/y", "nbds://host/export", "sim:"])
def test_unknown_specs_name_the_spec_and_forms(spec):
    with pytest.raises(IolabError) as e:
        parse_target(spec)
    assert repr(spec) in str(e.value)


# --- block ---------------------------------------------------------------------------------


def test_missing_device():
    with pytest.raises(IolabError, match="no such device /dev/iolab-nonexistent"):
        parse_target("/dev/iolab-nonexistent")


def test_character_device_is_not_a_block_device():
    with pytest.raises(IolabError, match="not a block device"):
        parse_target("/dev/null")


def test_block_device_takes_size_alone():
    with pytest.raises(IolabError, match="unknown option 'direct'; this kind of target accepts size"):
        parse_target("/dev/null?direct=1")


# --- nbd -----------------------------------------------------------------------------------


def test_nbd_tcp_with_size_needs_no_server():
    t = parse_target("nbd://storage.example:10810/disk1?size=64GiB")
    assert (t.kind, t.path, t.capacity) == ("nbd", "nbd://storage.example:10810/disk1", 64 * 1024**3)
    assert t.facts.interface == "nbd" and t.facts.capacity_bytes is None


def test_nbd_default_port_and_empty_export():
    assert parse_target("nbd://localhost?size=1GiB").path == "nbd://localhost:10809/"


def test_nbd_unix_socket_keeps_socket_in_uri():
    t = parse_target("nbd+unix:///exp?socket=/run/nbd.sock&size=1GiB")
    assert t.path == "nbd+unix:///exp?socket=/run/nbd.sock"
    assert t.option("socket") == "/run/nbd.sock"


def test_nbd_size_asked_from_server(monkeypatch):
    calls = []

    def fake(argv, timeout=60.0):
        calls.append(tuple(argv))
        return _result(argv, 0, "1073741824\n")

    monkeypatch.setattr(host, "run_command", fake)
    t = parse_target("nbd://localhost/e")
    assert calls == [("nbdinfo", "--size", "nbd://localhost:10809/e")]
    assert t.capacity == 1073741824
    assert t.facts.capacity_bytes == 1073741824 and t.facts.sources == ("nbdinfo",)


def test_nbd_size_is_asked_once_per_export_and_machine(monkeypatch):
    calls = []

    def fake(argv, timeout=60.0):
        calls.append(argv[-1])
        return _result(argv, 0, "1073741824\n")

    monkeypatch.setattr(host, "run_command", fake)
    for _ in range(3):  # a fleet reads its spec for the file, the duplicates and the identity
        assert parse_target("nbd://localhost/e").capacity == 1073741824
    assert parse_target("nbd://localhost:10809/e?size=1GiB").capacity == 1073741824  # the same export
    assert calls == ["nbd://localhost:10809/e"]
    parse_target("nbd://localhost/f")  # another export of the same server: asked
    parse_target("nbd+unix:///e?socket=/run/a.sock")
    parse_target("nbd+unix:///e?socket=/run/b.sock")  # another server's
    there = targets.Elsewhere("host h:8765", fake)
    parse_target("nbd://localhost/e", there)  # another machine's localhost: asked there
    parse_target("nbd://localhost/e", there)
    assert calls == [
        "nbd://localhost:10809/e",
        "nbd://localhost:10809/f",
        "nbd+unix:///e?socket=/run/a.sock",
        "nbd+unix:///e?socket=/run/b.sock",
        "nbd://localhost:10809/e",
    ]


def test_nbd_endpoints_key_every_address_of_this_machine_as_localhost(monkeypatch):
    from iolab.targets.spec import nbd_endpoints

    # 192.0.2.2 is taken for an interface's address of this machine (binds_here), 192.0.2.9 for another's
    monkeypatch.setattr(host, "binds_here", lambda a: a == "192.0.2.2")
    assert nbd_endpoints("nbd://192.0.2.2:10812/e") == nbd_endpoints("nbd://127.0.0.1:10812/e")
    assert nbd_endpoints("nbd://192.0.2.2:10812/e") == ["nbd://localhost:10812/e"]
    assert nbd_endpoints("nbd://192.0.2.9:10812/e") == ["nbd://192.0.2.9:10812/e"]


def test_nbd_endpoints_as_another_machine_reaches_them_key_its_own_addresses_as_its_localhost(monkeypatch):
    from iolab.targets.model import EndpointView
    from iolab.targets.spec import nbd_endpoints

    monkeypatch.setattr(host, "binds_here", lambda a: True)  # never asked: the view says what is the host's
    view = EndpointView(addresses=("192.0.2.5", "fe80::1%eth0"), own=frozenset({"192.0.2.5"}))
    assert nbd_endpoints("nbd://server:10812/e", view) == ["nbd://[fe80::1]:10812/e", "nbd://localhost:10812/e"]
    assert nbd_endpoints("nbd://0.0.0.0:10812/e", EndpointView(addresses=("0.0.0.0",))) == ["nbd://localhost:10812/e"]
    assert nbd_endpoints("nbd://gone:10812/e", EndpointView()) == ["nbd://gone:10812/e"]  # not resolved there
    unix = EndpointView(socket="/run/real.sock")
    assert nbd_endpoints("nbd+unix:///e?socket=/run/link.sock", unix) == ["nbd+unix:///run/real.sock/e"]


def test_nbd_size_without_nbdinfo_asks_for_size(monkeypatch):
    monkeypatch.setattr(host, "run_command", lambda argv, timeout=60.0: _result(argv, 127, err="not installed"))
    with pytest.raises(IolabError) as e:
        parse_target("nbd://localhost/e")
    assert "libnbd-bin" in str(e.value) and "nbd://localhost/e?size=8GiB" in str(e.value)


def test_nbd_server_down_is_reported(monkeypatch):
    monkeypatch.setattr(
        host, "run_command", lambda argv, timeout=60.0: _result(argv, 1, err="nbdinfo: connect: Connection refused")
    )
    with pytest.raises(IolabError, match="Connection refused"):
        parse_target("nbd+unix:///e?socket=/tmp/none.sock")


@pytest.mark.parametrize(
    "spec, words",
    [
        ("nbd+unix:///e", "needs ?socket=PATH"),
        ("nbd+unix://host/e?socket=/s", "takes no host"),
        ("nbd://host/e?socket=/s&size=1G", "socket= belongs"),
        ("nbd://host:99999/e?size=1G", "cannot read the NBD address"),
        ("nbd:///e?size=1G", "needs a host"),
        ("nbd://host/e?size=1G&foo=1", "unknown option 'foo'"),
    ],
)
def test_bad_nbd_specs(spec, words):
    with pytest.raises(IolabError) as e:
        parse_target(spec)
    assert words in str(e.value)


# --- sim -----------------------------------------------------------------------------------


def test_sim_without_sim_module_says_not_available(monkeypatch):
    monkeypatch.setitem(sys.modules, "iolab.targets.sim_facts", None)  # makes the import fail
    with pytest.raises(IolabError, match="simulated drive is not available in this build"):
        parse_target("sim:tlc-1tb")


def test_sim_spec_asks_the_sim_engine(monkeypatch):
    seen = {}

    def describe_target(preset, params):
        seen["args"] = (preset, params)
        return 512 * 10**9, DeviceFacts(model="sim TLC", interface="sim", capacity_bytes=512 * 10**9)

    monkeypatch.setitem(sys.modules, "iolab.targets.sim_facts", types.SimpleNamespace(describe_target=describe_target))
    t = parse_target("sim:tlc-1tb?op=7&cache=off")
    assert seen["args"] == ("tlc-1tb", {"op": "7", "cache": "off"})
    assert (t.kind, t.path, t.capacity, t.facts.model) == ("sim", "tlc-1tb", 512 * 10**9, "sim TLC")
    assert t.options == (("op", "7"), ("cache", "off"))
    # `--paths SPEC,SPEC&port=1` (as `iolab run --help` writes it) with SPEC a bare preset: the
    # '&' opens the options as '?' would (before: preset "tlc-1tb&port=1" was unknown, exit 2)
    t = parse_target("sim:tlc-1tb&port=1&op=7")
    assert seen["args"] == ("tlc-1tb", {"port": "1", "op": "7"})
    assert (t.path, t.options) == ("tlc-1tb", (("port", "1"), ("op", "7")))


# --- file safety, marking, preparation ------------------------------------------------------


def _file_target(path, size=1 << 20):
    return parse_target(f"file:{path}?size={size}")


def test_absent_file_is_safe(tmp_path):
    assert targets.check_safe_to_write(_file_target(tmp_path / "new.img"), False) == []


def test_empty_foreign_file_is_safe(tmp_path):
    (tmp_path / "e.img").touch()
    assert targets.check_safe_to_write(_file_target(tmp_path / "e.img"), False) == []


def test_foreign_nonempty_file_is_refused_and_override_is_reported(tmp_path):
    f = tmp_path / "photos.tar"
    f.write_bytes(b"precious" * 100)
    t = _file_target(f)
    with pytest.raises(RefusedError) as e:
        targets.check_safe_to_write(t, False)
    msg = str(e.value)
    assert "not created by iolab" in msg and str(f) in msg
    assert "--allow-unsafe-target" in msg and f"destroys data in {f}" in msg
    assert "\n" not in msg
    overridden = targets.check_safe_to_write(t, True)
    assert len(overridden) == 1 and overridden[0].startswith("not created by iolab:")


def test_non_regular_path_is_refused(tmp_path):
    # The spec was read while it was a file; it was replaced by a FIFO before the run wrote.
    t = Target(kind="file", spec="file:x", path=str(tmp_path / "fifo"), capacity=4096)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(RefusedError, match="not a regular file: .* is a FIFO"):
        targets.check_safe_to_write(t, False)


def test_prepare_file_creates_marks_and_allocates(tmp_path):
    t = _file_target(tmp_path / "t.img", 3 << 20)
    what = targets.prepare_file(t)
    assert "created" in what
    st = os.stat(t.path)
    assert st.st_size == 3 << 20
    assert st.st_blocks * 512 >= 3 << 20  # space allocated, not a sparse promise
    assert targets.created_by_iolab(t.path)
    (tmp_path / "t.img").write_bytes(b"data" * 1000)  # ours, now non-empty: still accepted
    assert targets.check_safe_to_write(t, False) == []
    assert "extended" in targets.prepare_file(t)
    assert os.path.getsize(t.path) == 3 << 20


def test_prepare_file_fails_cleanly_when_filesystem_is_full(tmp_path, monkeypatch):
    def no_space(fd, off, length):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", no_space)
    t = _file_target(tmp_path / "big.img", 1 << 30)
    with pytest.raises(IolabError, match="not enough space"):
        targets.prepare_file(t)
    assert not os.path.exists(t.path)  # no half-made file left behind


def test_not_enough_space_says_the_free_space_before_the_failed_allocation(tmp_path, monkeypatch):
    # ext4 keeps the blocks a posix_fallocate took before it ran out: 60 MiB asked with 19 MB
    # free, the disk read afterwards had 0 B free (seen on a 40 MB ext4 loop device: 15.3 MB free)
    disk = {"free": 19_000_000}

    def fills_then_fails(fd, off, length):
        disk["free"] = 0
        raise OSError(28, "No space left on device")

    def statvfs(_):
        return types.SimpleNamespace(f_bavail=disk["free"] // 4096, f_frsize=4096)

    monkeypatch.setattr(os, "posix_fallocate", fills_then_fails)
    monkeypatch.setattr(os, "statvfs", statvfs)
    monkeypatch.setattr(os, "fstatvfs", statvfs)
    t = _file_target(tmp_path / "big.img", 60 << 20)
    with pytest.raises(IolabError, match=r"it needs 62.91 MB, the filesystem has 19.00 MB free"):
        targets.prepare_file(t)


@pytest.fixture
def no_xattrs(monkeypatch):
    """A filesystem without user xattrs (vfat, some NFS): the mark is the sidecar."""

    def unsupported(*a):
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(os, "setxattr", unsupported)
    monkeypatch.setattr(os, "getxattr", unsupported)


def test_sidecar_mark_when_filesystem_has_no_xattrs(tmp_path, no_xattrs):
    f = tmp_path / "v.img"
    f.write_bytes(b"x" * 10)
    targets.mark_created(str(f))
    assert (tmp_path / "v.img.iolab").exists()
    assert targets.created_by_iolab(str(f))
    # A different file later put under the same name is not ours. Made while the first still
    # exists, so it cannot have the same inode number.
    g = tmp_path / "other"
    g.write_bytes(b"y" * 10)
    g.rename(f)
    assert not targets.created_by_iolab(str(f))


def test_the_sidecar_mark_records_an_outputs_kind(tmp_path, no_xattrs):
    """Without xattrs an output's kind is in its sidecar, after the inode; the policy reads it there
    too, and an older sidecar without one is an output of unknown kind."""
    from iolab.targets.files import read_mark
    from iolab.targets.writepolicy import file_problems

    f = tmp_path / "t.parquet"
    f.write_bytes(b"PAR1" * 10)
    targets.mark_created(str(f), "output", "IO table")
    assert (tmp_path / "t.parquet.iolab").read_text() == f"iolab output file, inode {f.stat().st_ino}: IO table\n"
    assert read_mark(str(f)) == ("output", "IO table")
    assert file_problems(f, "IO table") == []
    assert "is iolab's IO table" in file_problems(f, "JUnit file")[0]
    (tmp_path / "t.parquet.iolab").write_text(f"iolab output file, inode {f.stat().st_ino}\n")
    assert read_mark(str(f)) == ("output", None) and file_problems(f, "JUnit file") == []


@pytest.mark.parametrize("kind", ["data", "symlink"])
def test_the_sidecar_mark_never_overwrites_a_file_of_the_same_name(tmp_path, no_xattrs, kind):
    """Without xattrs the mark is a file named after the target; a user's file (or a symlink to
    one) under that name is refused, never replaced."""
    theirs = tmp_path / "notes.txt"
    theirs.write_text("someone's notes\n")
    side = tmp_path / "v.img.iolab"
    if kind == "data":
        side.write_text("someone's notes\n")
        theirs = side
    else:
        side.symlink_to(theirs)
    t = _file_target(tmp_path / "v.img", 1 << 20)
    with pytest.raises(IolabError, match="is not an iolab mark|cannot write iolab's mark"):
        targets.prepare_file(t)
    assert theirs.read_text() == "someone's notes\n"
    # iolab's own older mark (another inode) is replaced.
    side.unlink()
    side.write_text("iolab target file, inode 1\n")
    assert not os.path.exists(t.path)  # the refused attempt left nothing of its own
    targets.prepare_file(t)
    assert targets.created_by_iolab(t.path)
    assert side.read_text() == f"iolab target file, inode {os.stat(t.path).st_ino}\n"


def test_nbd_and_sim_have_nothing_to_check(monkeypatch):
    monkeypatch.setattr(host, "run_command", lambda argv, timeout=60.0: _result(argv, 0))  # nbdinfo: writable
    for kind in ("nbd", "sim"):
        assert targets.check_safe_to_write(Target(kind=kind, spec="x", path="x", capacity=1), False) == []


@pytest.mark.skipif(not shutil.which("mkfs.ext4") or not shutil.which("blkid"), reason="needs e2fsprogs, blkid")
def test_a_file_iolab_made_that_now_holds_a_filesystem_is_refused(tmp_path):
    t = _file_target(tmp_path / "t.img", 8 << 20)
    targets.prepare_file(t)
    assert targets.check_safe_to_write(t, False) == []
    subprocess.run(["mkfs.ext4", "-q", "-F", t.path], check=True, capture_output=True)
    assert targets.created_by_iolab(t.path)  # still carries iolab's mark
    with pytest.raises(RefusedError) as e:
        targets.check_safe_to_write(t, False)
    assert f"signature: {t.path} carries ext4 (filesystem) (found by blkid -p)" in str(e.value)
    assert "--allow-unsafe-target" in str(e.value)


def test_a_file_open_in_another_process_is_refused_naming_it(tmp_path):
    t = _file_target(tmp_path / "t.img")
    targets.prepare_file(t)
    with open(t.path, "rb") as f:
        holder = subprocess.Popen(["sleep", "300"], stdin=f)
    try:
        with pytest.raises(RefusedError, match=f"open: open by pid {holder.pid} \\(sleep\\)"):
            targets.check_safe_to_write(t, False)
    finally:
        holder.kill()
        holder.wait()
    with open(t.path, "rb"):  # our own descriptors are no reason to refuse
        assert targets.check_safe_to_write(t, False) == []


# --- write cache on targets without a switch -------------------------------------------------


@pytest.mark.parametrize(
    "target, words",
    [
        (Target("file", "file:/x", "/x", 1, DeviceFacts(interface="file")), "not settable on files"),
        (Target("nbd", "nbd://h/e", "nbd://h:10809/e", 1, DeviceFacts(interface="nbd")), "not settable on NBD"),
        (
            Target("block", "/dev/loop-iolab-none", "/dev/loop-iolab-none", 1, DeviceFacts(interface="loop")),
            "not settable on loop devices (direct IO bypasses the page cache",
        ),
        (Target("block", "/dev/zram0", "/dev/zram0", 1, DeviceFacts(interface="zram")), "not settable on zram"),
        (Target("block", "/dev/mmcblk0", "/dev/mmcblk0", 1, DeviceFacts(interface="mmc")), "not settable on mmc"),
    ],
)
def test_write_cache_not_settable(monkeypatch, target, words):
    def no_commands(argv, timeout=60.0):
        raise AssertionError(f"ran {argv}")

    monkeypatch.setattr(host, "run_command", no_commands)
    assert words in targets.set_write_cache(target, False)


def test_run_command_reports_missing_tool_and_failure():
    r = targets.run_command(["iolab-no-such-tool-xyz"])
    assert r.missing and not r.ok
    r = targets.run_command(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert r.returncode == 3 and r.text == "out\n" and r.stderr == "err\n"
    assert r.summary() == "$ sh -c echo out; echo err >&2; exit 3 -> exit 3: out err"
