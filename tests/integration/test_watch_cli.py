"""`iolab watch` as a user starts it, asked hostile requests: nothing outside the runs
directory is served (`..`, encoded dots, a `report` symlink pointing elsewhere), a NUL in the
path is a 400 rather than a dropped connection, a page reached under another host name (DNS
rebinding) is refused, and no file under the runs directory changes."""

from __future__ import annotations

import gc
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.integration.conftest import IOLAB
from tests.unit.test_report import DriveEngine, record


def free_port() -> int:
    """A port free now: a fixed one may be another test suite's on this machine (a fresh root
    beside a checkout shares its network)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT = free_port()
SECRET = b"not a report: outside the runs directory"


def files(d: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(d)): (p.lstat().st_mtime_ns, p.lstat().st_size) for p in d.rglob("*")}


def get(path: str, host: str | None = f"127.0.0.1:{PORT}", port: int = PORT) -> tuple[int, bytes]:
    """One GET with the request line exactly as given (http.client neither normalises nor
    re-encodes it) and the Host header given, or none."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        c.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            c.putheader("Host", host)
        c.endheaders()
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    """`iolab watch RUNS --port PORT` on a runs directory holding one finished run with a report,
    a run whose `report` is a symlink out of the runs directory, and secrets beside it."""
    base = tmp_path_factory.mktemp("watch")
    root = base / "runs"
    root.mkdir()
    run = record(root, "throughput", DriveEngine())
    gc.collect()  # closes the recording store, whose last connection checkpoints the WAL
    (run / "report").mkdir()
    (run / "report" / "index.html").write_text("<p>the report</p>")
    (run / "report" / "passwd.html").symlink_to("/etc/passwd")  # a link to a file outside
    (base / "report").mkdir()
    (base / "report" / "secret.html").write_bytes(SECRET)  # what /runs/../report/ names
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.html").write_bytes(SECRET)
    linked = root / "linked-run"
    linked.mkdir()
    (linked / "report").symlink_to(outside)
    # a run directory renamed (an archive's name for it) keeps its manifest's id
    other = record(root, "iops", DriveEngine())
    gc.collect()
    (other / "report").mkdir()
    (other / "report" / "index.html").write_text("<p>the renamed run's report</p>")
    renamed = other.rename(root / "drive-A-fw1")
    before = files(root)
    with watching(root, PORT) as proc:
        yield root, run.name, proc, (renamed, other.name)
    assert files(root) == before


@contextmanager
def watching(root: Path, port: int):
    """`iolab watch ROOT --port PORT` as a user starts it, once it listens; stopped after."""
    proc = subprocess.Popen(
        [*IOLAB, "watch", str(root), "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"iolab watch exited {proc.returncode}: {proc.stderr.read()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("iolab watch did not start listening")
                time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_watch_serves_the_page_and_a_report(watched):
    root, run, proc, _ = watched
    assert get("/")[0] == 200
    status, body = get("/api/runs")
    assert status == 200 and run.encode() in body
    assert b"index.html" in body and b"passwd.html" not in body  # a link out of the runs directory is not offered
    assert get(f"/runs/{run}/report/index.html") == (200, b"<p>the report</p>")
    for host in (f"localhost:{PORT}", f"[::1]:{PORT}"):
        assert get("/", host)[0] == 200


@pytest.mark.parametrize(
    "path,status",
    [
        ("/runs/../report/secret.html", 400),
        ("/runs/%2e%2e/report/secret.html", 400),
        ("/runs/%2E%2E/report/secret.html", 400),
        ("/runs/x/report/..%2f..%2f..%2freport%2fsecret.html", 400),
        ("/runs/linked-run/report/secret.html", 404),
        ("/runs/RUN/report/passwd.html", 404),
        ("/runs/RUN/report/%00", 400),
        ("/runs/RUN/report/index.html%00.pdf", 400),
        ("/runs/RUN/report/%ff", 400),
        ("/runs/RUN/report/", 400),
        ("/runs/RUN/manifest.json", 404),
    ],
)
def test_watch_serves_nothing_outside_a_runs_report(watched, path, status):
    root, run, proc, _ = watched
    got, body = get(path.replace("RUN", run))
    assert (got, SECRET in body, b"root:" in body) == (status, False, False)
    assert proc.poll() is None


@pytest.mark.parametrize("host", ["evil.example:80", "127.0.0.1:1", "127.0.0.1", "", None])
def test_watch_refuses_another_host_name(watched, host):
    root, run, proc, _ = watched
    for path in ("/", "/api/runs", f"/runs/{run}/report/index.html"):
        status, body = get(path, host)
        assert status == 421 and b"the report" not in body and run.encode() not in body


def ask(method: str, path: str) -> http.client.HTTPResponse:
    """One request by `method` (its body read: none for a HEAD)."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=20)
    try:
        c.request(method, path, body=b"x=1" if method in ("POST", "PUT") else None)
        r = c.getresponse()
        r.body = r.read()  # type: ignore[attr-defined]
        return r
    finally:
        c.close()


def test_watch_answers_head_as_get_without_the_body_and_refuses_other_methods(watched):
    """HEAD (curl -I, link checkers) was answered 501 "Unsupported method", as POST was; HEAD is now
    GET's status and headers without its body, every other method 405 with an Allow header."""
    root, run, proc, _ = watched
    for path in ("/", "/api/runs", f"/runs/{run}/report/index.html", "/nope", f"/runs/{run}/report/passwd.html"):
        r, g = ask("HEAD", path), ask("GET", path)
        assert (r.status, r.body) == (g.status, b""), path
        assert r.getheader("Content-Type") == g.getheader("Content-Type"), path
        if path != "/api/runs":  # the snapshot's own (its times) may differ by a byte between the two
            assert r.getheader("Content-Length") == str(len(g.body)), path
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "BREW"):
        r = ask(method, "/api/runs")
        assert (r.status, r.getheader("Allow")) == (405, "GET, HEAD"), method
        assert b"read-only" in r.body and run.encode() not in r.body, method
    assert proc.poll() is None  # and nothing under the runs directory changed: the fixture checks


def test_watch_without_a_runs_directory_says_so(tmp_path):
    p = subprocess.run(
        [*IOLAB, "watch", str(tmp_path / "none"), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert p.returncode != 0 and "does not exist" in p.stderr and "Traceback" not in p.stderr


def test_watch_serves_the_report_of_a_renamed_run_directory(watched):
    # the list and the run page named it by its id, but its report links gave 404: the report
    # route looked for a directory of the id's name
    root, run, proc, (renamed, run_id) = watched
    assert run_id != run and renamed.name != run_id
    status, body = get("/api/runs")
    href = f"/runs/{run_id}/report/index.html"
    assert status == 200 and href.encode() in body
    assert get(f"/runs/{run_id}")[0] == 200
    assert get(href) == (200, b"<p>the renamed run's report</p>")
    # its directory's name names it too, as `iolab show` takes it
    assert get(f"/runs/{renamed.name}/report/index.html") == (200, b"<p>the renamed run's report</p>")


def test_watch_shows_a_copy_of_a_run_beside_its_original_as_two_runs(tmp_path):
    # a copy of a results directory beside its original keeps the run id: the list showed two
    # rows with one link, and the page, its data and its reports were the first directory found.
    # The id then answered 409 while `iolab show ID` opened the original, the directory it names:
    # both now take it as show does, and refuse it, naming both, where it names no directory.
    root = tmp_path / "runs"
    root.mkdir()
    run = record(root, "throughput", DriveEngine())
    gc.collect()
    (run / "report").mkdir()
    (run / "report" / "index.html").write_text("<p>the original</p>")
    copy = Path(shutil.copytree(run, root / f"{run.name}.bak"))
    (copy / "report" / "index.html").write_text("<p>the copy</p>")
    port = free_port()
    host = f"127.0.0.1:{port}"
    with watching(root, port):
        status, body = get("/api/runs", host, port)
        rows = json.loads(body)["runs"]
        assert status == 200 and [r["id"] for r in rows] == [run.name, run.name], body
        hrefs = [r["reports"][0]["href"] for r in rows]
        assert hrefs[0] != hrefs[1], hrefs  # each row's report link opens its own directory's
        by_dir = {r["directory"]: r for r in rows}
        for d, ref, said in (
            (run, run.name, b"<p>the original</p>"),
            (copy, f"{run.name}@{copy.name}", b"<p>the copy</p>"),
        ):
            assert by_dir[d.name]["ref"] == ref
            assert by_dir[d.name]["reports"] == [{"name": "index.html", "href": f"/runs/{ref}/report/index.html"}]
            assert get(f"/runs/{ref}/report/index.html", host, port) == (200, said)
            assert get(f"/runs/{ref}", host, port)[0] == 200
            status, data = get(f"/api/runs/{ref}", host, port)
            assert status == 200 and json.loads(data)["summary"]["directory"] == d.name
            shown = subprocess.run(
                [*IOLAB, "show", ref.partition("@")[0] if d == run else d.name, "--json", "--runs-dir", str(root)],
                capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert shown.returncode == 0 and json.loads(shown.stdout)["runs"][0]["path"] == str(d), shown.stderr
        assert get(f"/runs/{run.name}@{run.name}", host, port)[0] == 200  # the address a 409 gave before
    # two copies, neither named by the id: it names neither, in both, each naming both directories
    shutil.move(run, root / "original")
    port = free_port()
    host = f"127.0.0.1:{port}"
    with watching(root, port):
        for path in (f"/runs/{run.name}", f"/api/runs/{run.name}", f"/runs/{run.name}/report/index.html"):
            status, said = get(path, host, port)
            text = said.decode()
            assert status == 409 and f"run id {run.name} is held by 2 run directories: " in text, text
            assert f"{root / 'original'} (/runs/{run.name}@original)" in text
            assert f"{copy} (/runs/{run.name}@{copy.name})" in text
    shown = subprocess.run(
        [*IOLAB, "show", run.name, "--runs-dir", str(root)], capture_output=True, text=True, timeout=120
    )
    said = " ".join(shown.stderr.split())
    assert shown.returncode == 2 and f"run {run.name!r} is ambiguous" in said, said
    assert f"{copy.name}, original" in said, said


def test_a_closed_standard_output_is_dropped_and_the_page_still_served(tmp_path):
    """`iolab watch | head -1` whose reader is gone before the first line: the line is dropped, the
    page is served, and Ctrl-C ends it with nothing said (Rich's console exited 1 on the broken pipe)
    and exit status 130, the status Ctrl-C gives every command (docs/automation.md; it was 0)."""
    from tests.integration.conftest import default_signals, free_port, wait_listening

    port, (r, w) = free_port(), os.pipe()
    os.close(r)  # the reader has gone: the first write fails with EPIPE
    proc = subprocess.Popen(
        [*IOLAB, "watch", str(tmp_path), "--port", str(port)],
        stdout=w,
        stderr=subprocess.PIPE,
        preexec_fn=default_signals,  # stopped with SIGINT below
    )
    os.close(w)
    try:
        wait_listening(proc, port, "iolab watch")
        assert get("/", host=f"127.0.0.1:{port}", port=port)[0] == 200
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == b"", (proc.returncode, err)


def test_a_pdf_without_its_html_is_not_listed_until_the_set_is_whole(tmp_path):
    """The PDF is put in place first: alone, it is a report being placed or one a stop left half-way."""
    from iolab.api.watch import _reports

    report = tmp_path / "run" / "report"
    report.mkdir(parents=True)
    (report / "r.pdf").write_bytes(b"%PDF-1.7")
    assert _reports(tmp_path, tmp_path / "run", "run") == []
    (report / "r.html").write_text("<p>the report</p>")
    assert [r["name"] for r in _reports(tmp_path, tmp_path / "run", "run")] == ["r.html", "r.pdf"]


def test_watch_listens_on_an_ipv6_address_and_words_a_bad_bind_as_the_address(tmp_path):
    """Before: --bind ::1 and [::1] failed ("Address family for hostname not supported"), and every
    bind failure advised another --port, a bad address too."""
    root = tmp_path / "runs"
    root.mkdir()
    for bind in ("::1", "[::1]"):
        proc = subprocess.Popen(
            [*IOLAB, "watch", str(root), "--bind", bind, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            line = proc.stdout.readline() if proc.stdout else ""
            assert line.startswith("iolab watch: http://[::1]:"), (line, proc.stderr.read() if proc.poll() else "")
            port = int(line.split("]:")[1].split("/")[0])
            c = http.client.HTTPConnection("::1", port, timeout=20)
            c.request("GET", "/", headers={"Host": f"[::1]:{port}"})
            assert c.getresponse().status == 200
            c.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    bad = subprocess.run(
        [*IOLAB, "watch", str(root), "--bind", "999.1.1.1"], capture_output=True, text=True, timeout=60
    )
    said = " ".join(bad.stderr.split())
    assert bad.returncode == 2 and "give --bind an address of this machine" in said and "--port" not in said, said
    assert "iolab: iolab watch" not in said
    with socket.socket() as taken:  # a port in use: then, and only then, another --port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = subprocess.run(
            [*IOLAB, "watch", str(root), "--port", str(port)], capture_output=True, text=True, timeout=60
        )
    said = " ".join(busy.stderr.split())
    assert busy.returncode == 2 and "choose another --port" in said and "--bind" not in said, said


def test_a_wildcard_bind_prints_an_address_its_page_answers_on(tmp_path):
    """`iolab watch --bind 0.0.0.0` printed http://0.0.0.0:PORT/, and the page refused that Host
    (421, "open this page by the address iolab watch printed"): the one URL it gave did not open."""
    root = tmp_path / "runs"
    root.mkdir()
    proc = subprocess.Popen(
        [*IOLAB, "watch", str(root), "--bind", "0.0.0.0", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        url = re.match(r"iolab watch: http://([^/]+):(\d+)/ \(Ctrl-C stops; from another machine", line)
        assert url, (line, proc.stderr.read() if proc.poll() else "")
        host, port = url.group(1), int(url.group(2))
        c = http.client.HTTPConnection(host, port, timeout=20)
        c.request("GET", "/")  # the Host header a browser sends for that URL
        assert c.getresponse().status == 200
        c.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
