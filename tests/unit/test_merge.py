"""Merging split rounds (several hosts or paths): recorded fio client/server output, exact
percentiles from summed json+ bins, the outstanding-IO split, the host list and ssh mode."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from iolab.core.errors import EngineError, IolabError
from iolab.core.results import PERCENTILES, json_objects, json_spans
from iolab.core.workload import Stream, Workload
from iolab.engines.fio_client import client_parts
from iolab.engines.fio_hosts import Leg
from iolab.engines.fioprobe import Probe
from iolab.engines.hostlist import Host, load_hosts_file, parse_hosts
from iolab.engines.hosts import ssh_start_command, ssh_tunnel_command, ssh_watch_command
from iolab.engines.merge import breakdown, merge, split_workload
from iolab.targets import Target

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "fio"
HOSTS = [Host("10.77.1.2"), Host("10.77.2.2")]
TAG = "main-r01-c00-x"


def workload(**kw) -> Workload:
    return Workload((Stream("rnd", "read", 4096, 1.0),), duration_s=1.0, **kw)


def legs():
    t = Target("file", "file:/x?size=16MiB", "/x", 16 << 20)
    return [(i, Leg(h.name, t, 1.0, h), workload()) for i, h in enumerate(HOSTS)]


def recorded(tmp_path: Path, edit=None) -> Path:
    raw = tmp_path / "raw"
    raw.mkdir()
    text = (FIX / "two_clients.json").read_text()
    (raw / f"{TAG}.json").write_text(edit(text) if edit else text)
    return raw


def parts(raw: Path):
    return client_parts(legs(), {h.name: (h.address, h.port) for h in HOSTS}, raw, TAG, 0)


def report() -> dict:
    t = (FIX / "two_clients.json").read_text()
    return json.loads(t[t.index("\n{") :])


def pooled_percentile(lat: list[float], pct: float) -> float:
    """Nearest rank: the smallest latency with at least pct % of all IOs at or below it."""
    return sorted(lat)[max(1, math.ceil(pct / 100 * len(lat) - 1e-9)) - 1]


def test_merged_percentiles_are_the_pooled_latencies_not_the_mean_of_per_host_ones(tmp_path):
    ps = parts(recorded(tmp_path))
    merged = merge(ps, "fio", "fio-3.33")
    pooled = [v for p in ps for v, c in zip(p.result.histogram.values_us, p.result.histogram.counts) for _ in range(c)]
    assert len(pooled) == merged.ios == 1569615 + 31021
    for pct in PERCENTILES:
        assert merged.percentile(pct) == pytest.approx(min(pooled_percentile(pooled, pct), merged.lat_max_us))
    for pct in (50.0, 99.0, 99.9):
        mean_of_hosts = sum(p.result.percentile(pct) for p in ps) / len(ps)
        assert merged.percentile(pct) != pytest.approx(mean_of_hosts, rel=0.05)
    # the slow host's 2 % of IOs decide the 99.9th percentile; the fast host's the median
    assert merged.percentile(50.0) < 1.0 < 20.0 < merged.percentile(99.9)


def test_a_one_second_cell_through_fio_servers_keeps_a_per_second_row(tmp_path):
    """Recorded: two fio servers each ran a 1 s job of iolab's (log_avg_msec=1000) and neither
    sent an iops or bw log line (fio's helper samples a window only while the job runs, and its
    tick came after the 1,001 ms job ended), so the cell stored no per-second row. Each host's
    series is now its round as one row (its IOs over its runtime, its own mean latency), and the
    merged series their sum."""
    raw = tmp_path / "raw"
    shutil.copytree(FIX / "one_second_clients", raw)
    assert not [p for p in raw.glob("*_iops.1.log.*") if p.stat().st_size]  # fio logged nothing
    hosts = [Host("127.0.0.1", 18765), Host("127.0.0.1", 18766)]
    t = Target("file", "file:/var/tmp/hs4/t.img?size=16MiB", "/var/tmp/hs4/t.img", 16 << 20)
    ps = client_parts(
        [(i, Leg(h.name, t, 1.0, h), workload()) for i, h in enumerate(hosts)],
        {h.name: (h.address, h.port) for h in hosts},
        raw,
        TAG,
        0,
    )
    for p in ps:
        [row] = p.result.series
        assert row.t_s == p.result.runtime_s == 1.001
        assert row.read_iops * row.t_s == pytest.approx(p.result.read.ios) and row.write_iops == 0
        assert row.mbps * 1e6 * row.t_s == pytest.approx(p.result.read.io_bytes)
        assert row.lat_mean_us == p.result.lat_mean_us
    [row] = merge(ps, "fio", "fio-3.33").series
    assert row.read_iops == pytest.approx(sum(p.result.read.ios for p in ps) / 1.001)


def test_a_client_runs_raw_json_is_its_json_document_and_its_other_lines_are_kept_beside_it(tmp_path):
    # the kept TAG.json began with "<vm> rnd: (g=0): ...": not the JSON its name says
    raw = recorded(tmp_path)
    whole = (raw / f"{TAG}.json").read_text()
    got = parts(raw)
    doc = json.loads((raw / f"{TAG}.json").read_text())
    assert doc["fio version"] and {j["hostname"] for j in doc["client_stats"]} >= {"10.77.1.2", "10.77.2.2"}
    log = (raw / f"{TAG}.client.log").read_text()
    assert log.startswith("<vm> rnd: (g=0): rw=randread") and "Starting 2 processes" in log and "{" not in log
    # nothing fio printed is lost: the two files hold the output's every non-blank line
    kept = (log + (raw / f"{TAG}.json").read_text()).split()
    assert sorted(kept) == sorted(whole.split())
    document = (raw / f"{TAG}.json").read_text()
    assert document.endswith("}\n") and document[:-1] in whole  # fio's own bytes of it, as it printed them
    assert all(f"raw/{TAG}.client.log" in p.result.raw_files for p in got)
    assert [p.result.ios for p in got] == [p.result.ios for p in parts(raw)]  # read again: the same


def test_json_spans_give_each_objects_exact_text_and_json_objects_the_same_objects():
    # keep_apart cut the client's document out with a scan of its own beside this one
    text = 'warn: x\n{"a": 1,\n  "b" : [1, 2]}\n<vm> line\n  { "c":{}}\n{"d": '
    found, other, cut = json_spans(text)
    assert [text[start:end] for start, end, _ in found] == ['{"a": 1,\n  "b" : [1, 2]}', '{ "c":{}}']
    assert [obj for *_, obj in found] == json_objects(text)[0] == [{"a": 1, "b": [1, 2]}, {"c": {}}]
    assert other == ["warn: x", "<vm> line", '{"d": '] and cut == text.index('{"d"')


def test_merged_totals_agree_with_fios_all_clients_entry(tmp_path):
    merged = merge(parts(recorded(tmp_path)), "fio", "fio-3.33")
    fio_all = next(j for j in report()["client_stats"] if j["jobname"] == "All clients")
    assert merged.ios == fio_all["read"]["total_ios"]
    assert merged.io_bytes == fio_all["read"]["io_bytes"]
    # fio divides by the longest client's runtime, iolab adds each client's own rate
    assert merged.iops == pytest.approx(fio_all["read"]["iops"], rel=0.02)
    assert merged.mbps == pytest.approx(fio_all["read"]["bw_bytes"] / 1e6, rel=0.02)
    assert "All clients" not in json.dumps(breakdown(merged.counters), default=str)


def test_breakdown_keeps_each_hosts_own_figures(tmp_path):
    ps = parts(recorded(tmp_path))
    by_name = {p.name: p.figures for p in breakdown(merge(ps, "fio", "fio-3.33").counters)}
    assert list(by_name) == ["10.77.1.2:8765", "10.77.2.2:8765"]
    assert by_name["10.77.1.2:8765"]["ios"] == 1569615
    assert by_name["10.77.2.2:8765"]["iops"] == pytest.approx(30928.215354)
    assert by_name["10.77.2.2:8765"]["p99_us"] == ps[1].result.percentile(99.0) > 100


def test_a_host_missing_from_the_output_fails_the_round_naming_it(tmp_path):
    def drop_host_b(text: str) -> str:
        d = json.loads(text[text.index("\n{") :])
        d["client_stats"] = [j for j in d["client_stats"] if j["hostname"] != "10.77.2.2"]
        return "client: host=10.77.2.2 disconnected\n" + json.dumps(d)

    with pytest.raises(
        EngineError, match=r"host 10\.77\.2\.2:8765 sent no results; it said: client: host=10\.77\.2\.2 disconnected"
    ):
        parts(recorded(tmp_path, drop_host_b))


def test_a_host_gone_between_rounds_is_named_though_fio_only_says_connection_refused(tmp_path, monkeypatch):
    import iolab.engines.fio_client as fio_client

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / f"{TAG}.json").write_text("fio: connect: Connection refused\n")
    monkeypatch.setattr(fio_client, "answers", lambda addr, port, timeout: addr == "10.77.1.2")
    with pytest.raises(EngineError) as e:
        client_parts(legs(), {h.name: (h.address, h.port) for h in HOSTS}, raw, TAG, 1)
    said = str(e.value)
    assert "no longer answering: 10.77.2.2:8765;" in said and "10.77.1.2" not in said
    assert "Connection refused" in said


def test_split_keeps_the_total_outstanding_io():
    w = workload(threads=4, queue_depth=32, rate_iops=900, bytes_budget=3 << 20)
    a, b = split_workload(w, [1, 1])
    assert (a.threads, a.queue_depth, b.threads, b.queue_depth) == (2, 32, 2, 32)
    assert a.rate_iops + b.rate_iops == 900 and a.bytes_budget + b.bytes_budget == 3 << 20
    x, y = split_workload(workload(threads=3), [2, 1])
    assert (x.threads, y.threads) == (2, 1)
    one, two, three = split_workload(workload(threads=2, queue_depth=16), [1, 1, 1])
    assert sum(p.threads * p.queue_depth for p in (one, two, three)) == 32
    assert split_workload(workload(), [1, 1])[1] is None  # one IO cannot be split
    assert split_workload(w, [1]) == [w]


def test_host_list_and_hosts_file(tmp_path):
    assert [h.name for h in parse_hosts("10.0.0.2, h3:9000,[fd00::1]:8766")] == [
        "10.0.0.2:8765",
        "h3:9000",
        "fd00::1:8766",
    ]
    from iolab.engines.hosts import server_arg

    assert server_arg("fd00::1", 8766) == "ip6:fd00::1,8766" and server_arg("10.0.0.2", 8765) == "10.0.0.2,8765"
    with pytest.raises(IolabError, match="listed twice"):
        parse_hosts("a,a:8765")
    f = tmp_path / "hosts.toml"
    f.write_text(
        '[[host]]\naddress = "10.0.0.2"\ntarget = "/dev/nvme1n1"\nshare = 2\n\n[[host]]\naddress = "10.0.0.3"\nport = 8766\n'
    )
    a, b = load_hosts_file(f)
    assert (a.target, a.share, b.name) == ("/dev/nvme1n1", 2.0, "10.0.0.3:8766")
    f.write_text('[[host]]\naddress = "10.0.0.2"\n\n[[host]]\naddress = "10.0.0.3"\nshare = -1\n')
    with pytest.raises(IolabError, match=r"line 4 \(\[\[host\]\] #2\): field 'share'"):
        load_hosts_file(f)
    f.write_text('[[host]]\nadress = "10.0.0.2"\n')
    with pytest.raises(IolabError, match="line 1 .*unknown field 'adress'"):
        load_hosts_file(f)


def test_ssh_mode_serves_on_a_unix_socket_of_its_own_and_tunnels_to_it():
    h = Host("10.0.0.2", ssh="bench@10.0.0.2")
    start = ssh_start_command(h)
    assert start[:3] == ["ssh", "-o", "BatchMode=yes"] and start[-2] == "bench@10.0.0.2" and "-F" not in start
    # no port on the host: a server of its own per run, on a socket in its own directory
    assert 'fio --server="sock:$d/fio.sock" --daemonize="$d/server.pid"' in start[-1] and "8765" not in start[-1]
    tunnel = ssh_tunnel_command(h, 40123, "/tmp/iolab-fio-server-abcdef")
    assert "0.0.0.0" not in " ".join(start + tunnel)
    assert tunnel[-3:] == ["-L", "127.0.0.1:40123:/tmp/iolab-fio-server-abcdef/fio.sock", "bench@10.0.0.2"]
    assert "BatchMode=yes" in tunnel and "ExitOnForwardFailure=yes" in tunnel
    # the tunnel's remote command watches the server: it stops it when the session's input ends
    watch = ssh_watch_command("/tmp/iolab-fio-server-abcdef")
    assert watch.startswith("cat >/dev/null; ") and 'kill "$p"' in watch
    assert "rm -f /tmp/iolab-fio-server-abcdef/server.pid /tmp/iolab-fio-server-abcdef/fio.sock" in watch
    assert watch.endswith("rmdir /tmp/iolab-fio-server-abcdef")
    h = Host("10.0.0.2", ssh="b", ssh_config="/etc/x.conf")
    start, tunnel = ssh_start_command(h), ssh_tunnel_command(h, 40123, "/tmp/iolab-fio-server-abcdef")
    assert start[start.index("-F") + 1] == "/etc/x.conf" and tunnel[tunnel.index("-F") + 1] == "/etc/x.conf"


def test_a_server_of_another_fio_version_is_refused_naming_the_host(monkeypatch):
    import iolab.engines.hosts as hosts

    monkeypatch.setattr(
        hosts,
        "remote_version",
        lambda endpoint, fio="fio", b=None, refused=None: Probe(
            "fio-3.35" if endpoint[0] == "b" else "fio-3.33", 1.0, 1
        ),
    )
    servers = hosts.Servers(endpoints={"a:8765": ("a", 8765), "b:8765": ("b", 8765)})
    with pytest.raises(IolabError, match="host b:8765 runs fio-3.35, this machine runs fio-3.33"):
        hosts.check_versions([Host("a"), Host("b")], servers, "fio-3.33")
    hosts.check_versions([Host("a")], servers, "fio-3.33")


def test_the_stored_split_rebuilds_the_same_legs():
    from iolab.engines.fio_hosts import Leg, SplitFioEngine, host_legs, legs_from_manifest
    from iolab.targets import parse_target

    t = parse_target("file:/var/tmp/x.img?size=1MiB")
    hosts = [Host("10.0.0.2", target="/data/a.img", share=3.0, ssh="b@h", ssh_config="/c"), Host("10.0.0.3", 8766)]
    legs = host_legs(t, hosts)
    stored = SplitFioEngine.split.fget(type("E", (), {"legs": legs})())  # what the manifest keeps
    assert legs_from_manifest(t, stored) == legs
    paths = [Leg("/var/tmp/x.img", t), Leg("/var/tmp/y.img", replace(t, path="/var/tmp/y.img"))]
    assert legs_from_manifest(t, SplitFioEngine.split.fget(type("E", (), {"legs": paths})())) == paths
    with pytest.raises(IolabError, match="stored split .* is not one this iolab can rebuild"):
        legs_from_manifest(t, [{"name": "x", "share": 1.0, "host": {"adress": "10.0.0.2"}}])


def test_a_hosts_file_ssh_config_needs_an_ssh_host(tmp_path):
    f = tmp_path / "hosts.toml"
    f.write_text(
        '[[host]]\naddress = "10.0.0.2"\nssh = "b@h"\nssh_config = "/etc/b.conf"\n\n'
        '[[host]]\naddress = "10.0.0.3"\nssh_config = "/etc/b.conf"\n'
    )
    with pytest.raises(IolabError, match=r"line 6 \(\[\[host\]\] #2\): field 'ssh_config' needs field 'ssh'"):
        load_hosts_file(f)
    f.write_text('[[host]]\naddress = "10.0.0.2"\nssh = "b@h"\nssh_config = "/etc/b.conf"\n')
    assert load_hosts_file(f)[0].ssh_config == "/etc/b.conf"
