"""The pages `iolab watch` serves: the list of runs and a page per run. Both poll the server's
JSON endpoints and redraw in place; the charts are inline SVG drawn by the small script below
(no library, nothing fetched from another site, so the page works offline)."""

from __future__ import annotations

import html
import json

# The run list spans the window and its long cells (run ids, targets with a query string, report
# names, live text) may break anywhere: ten columns then fit a 1,280 px window with nothing to
# scroll sideways to. Numbers and words elsewhere stay whole.
STYLE = """<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;width:100%}
td,th{border:1px solid #bbb;padding:.3em .5em;text-align:left;vertical-align:top}td.long{overflow-wrap:anywhere}td.num{white-space:nowrap}
.sub{color:#555;font-size:.9em}
.running{color:#06c;font-weight:bold}.failed,.broken,.interrupted{color:#b00}
.charts{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0}figcaption{font-size:.9em;max-width:460px}
svg.chart{background:#fff;border:1px solid #ddd}.legend span{margin-right:1em}</style>"""

# chart(title, series, opts): an <figure> with an SVG line chart. series: [{name, points: [[x, y]]}];
# opts.band: {x0, x1, low, high} shaded; opts.xlabel / opts.ylabel. Each plotted point is a
# <circle>, so what is drawn can be counted.
CHART_JS = r"""
const NS = "http://www.w3.org/2000/svg", COLORS = ["#06c", "#d62", "#393", "#939", "#c90", "#555"];
function fmt(v) { return v == null ? "—" : Math.round(v).toLocaleString("en"); }
// a finished run's steady state in the words `iolab show` gives it (core/steady)
const RUN_STEADY = {"reached": "reached", "not-reached": "NOT reached", "not-evaluated": "not evaluated (no window of rounds was filled)",
  "not-applicable": "not applicable (no phase tracks it)"};
// a time of day as the terminal prints it (HH:MM:SS, 24-hour), whatever the browser's locale
function clock(d) { return [d.getHours(), d.getMinutes(), d.getSeconds()].map(n => String(n).padStart(2, "0")).join(":"); }
// An axis reads at a glance when its ticks are round numbers (1, 2, 2.5 or 5 × 10^k apart) written
// alike: one suffix and one number of decimals for all of them.
function niceStep(span, whole) { const m = Math.pow(10, Math.floor(Math.log10(span / 4)));
  const st = (whole ? [1, 2, 5, 10] : [1, 2, 2.5, 5, 10]).map(f => f * m).find(s => span / s <= 5.5);
  return whole ? Math.max(1, Math.round(st)) : st; }
function ticks(lo, hi, whole) { const st = niceStep(hi - lo, whole), out = [];
  const first = Math.floor(lo / st + 1e-9), last = Math.ceil(hi / st - 1e-9);
  for (let i = first; i <= last; i++) out.push(i * st);
  return {values: out, step: st}; }
function labeller(values, step) { const top = Math.max(...values.map(Math.abs));
  const [div, suf] = top >= 1e6 ? [1e6, "M"] : top >= 1e4 ? [1e3, "k"] : [1, ""];
  let dec = 0; const q = step / div; while (dec < 3 && Math.abs(q * 10 ** dec - Math.round(q * 10 ** dec)) > 1e-6) dec++;
  return v => v === 0 ? "0" : (v / div).toFixed(dec) + suf; }
function el(name, attrs, parent) { const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); if (parent) parent.appendChild(e); return e; }
function chart(title, series, opts) {
  opts = opts || {}; const W = 460, H = 220, L = 58, R = 10, T = 10, B = 34;
  const pts = series.flatMap(s => s.points).filter(p => p[1] != null);
  const fig = document.createElement("figure"); const cap = document.createElement("figcaption");
  cap.textContent = title; fig.appendChild(cap);
  const svg = el("svg", {width: W, height: H, class: "chart", viewBox: `0 0 ${W} ${H}`}, fig);
  svg.dataset.points = pts.length;
  if (!pts.length) { const t = el("text", {x: W / 2, y: H / 2, "text-anchor": "middle", fill: "#777"}, svg);
    t.textContent = opts.empty || "no data yet"; return fig; }
  const xs = pts.map(p => p[0]), ys = pts.map(p => p[1]);
  if (opts.band) ys.push(opts.band.low, opts.band.high);
  let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(0, ...ys), y1 = Math.max(...ys);
  if (x1 === x0) { x0 -= 1; x1 += 1; } if (y1 === y0) y1 = y0 + 1;
  const yt = ticks(y0, y1); y0 = yt.values[0]; y1 = yt.values[yt.values.length - 1];
  const X = x => L + (x - x0) / (x1 - x0) * (W - L - R), Y = y => H - B - (y - y0) / (y1 - y0) * (H - T - B);
  const ylab = labeller(yt.values, yt.step);
  for (const v of yt.values) { el("line", {x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: "#eee"}, svg);
    el("text", {x: L - 4, y: Y(v) + 4, "text-anchor": "end", "font-size": 10}, svg).textContent = ylab(v); }
  // whole-numbered x (rounds, cells, seconds): steps of 1, 2, 5, 10, ... never a fraction
  const xt = ticks(x0, x1, opts.whole_x);
  const xlab = labeller(xt.values, xt.step);
  for (const v of xt.values.filter(v => v >= x0 - 1e-9 && v <= x1 + 1e-9))
    el("text", {x: X(v), y: H - B + 14, "text-anchor": "middle", "font-size": 10}, svg).textContent = xlab(v);
  el("text", {x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle", "font-size": 11}, svg).textContent = opts.xlabel || "";
  el("text", {x: 12, y: (T + H - B) / 2, "text-anchor": "middle", "font-size": 11,
              transform: `rotate(-90 12 ${(T + H - B) / 2})`}, svg).textContent = opts.ylabel || "";
  if (opts.band) { const b = opts.band;
    el("rect", {x: X(b.x0), y: Y(b.high), width: Math.max(2, X(b.x1) - X(b.x0)), height: Math.max(1, Y(b.low) - Y(b.high)),
                fill: b.ok ? "#cfc" : "#fdd", "fill-opacity": .6, class: "band"}, svg); }
  // the legend names what was drawn: a series without a value (a latency fio did not log) gets no entry
  const drawn = [];
  series.forEach((s, i) => { const c = s.color || COLORS[i % COLORS.length];
    const p = s.points.filter(q => q[1] != null), line = p.length > 1, dots = !s.line_only && p.length > 0;
    if (line) el("polyline", {points: p.map(q => X(q[0]) + "," + Y(q[1])).join(" "), fill: "none", stroke: c,
                              "stroke-width": 1.5, "stroke-dasharray": s.dash || "", "data-series": s.name}, svg);
    if (dots) for (const q of p) el("circle", {cx: X(q[0]), cy: Y(q[1]), r: 2.5, fill: c, "data-series": s.name}, svg);
    if (line || dots) drawn.push([s.name, c]); });
  if (series.length > 1) { const lg = document.createElement("div"); lg.className = "legend";
    for (const [name, c] of drawn) { const sp = document.createElement("span"); sp.style.color = c;
      sp.textContent = "● " + name; lg.appendChild(sp); } fig.appendChild(lg); }
  return fig;
}
function poller(url, render, ms) {
  async function poll() {
    try { const r = await fetch(url, {cache: "no-store"}); if (r.ok) render(await r.json()); } catch (e) { /* server restarting */ }
    setTimeout(poll, ms);
  }
  poll();
}
"""

LIST_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>iolab watch</title><link rel="icon" href="data:,">%(style)s</head>
<body><h1>iolab runs in <span id="root"></span></h1>
<p>Updated <span id="updated">never</span> (every %(poll)d ms). Read-only view of the run store. Open a run for its charts.</p>
<p id="fleets"></p>
<table><thead><tr><th>run (test on target)</th><th>state</th><th>phase and round</th>
<th>last cell: IOPS (per host / path)</th><th>mean latency µs</th><th>p99 µs</th><th>max latency µs</th>
<th>steady state</th><th>time left</th><th>reports</th></tr></thead>
<tbody id="runs"></tbody></table>
<script>%(chart)s
function cell(tr, text, cls) { const td = document.createElement("td"); td.textContent = text == null ? "—" : text;
  if (cls) td.className = cls; tr.appendChild(td); return td; }
function line(td, text, cls) { const d = document.createElement("div"); d.textContent = text; if (cls) d.className = cls;
  td.appendChild(d); return d; }
function render(data) {
  document.getElementById("root").textContent = data.root;
  document.getElementById("fleets").textContent = (data.fleets || []).length ? "Fleets: " + data.fleets.map(f =>
    f.name + " (" + f.test + ", " + f.state + ", " + f.complete + " of " + f.drives + " drives complete)").join("; ") : "";
  const body = document.getElementById("runs"); body.replaceChildren();
  for (const r of data.runs) {
    const tr = document.createElement("tr"); tr.dataset.run = r.ref;
    const a = document.createElement("a"); a.href = "/runs/" + encodeURIComponent(r.ref); a.textContent = r.id;
    const td_run = cell(tr, "", "long"); td_run.appendChild(a); line(td_run, r.test + " on " + r.target, "sub");
    // a copy of a run beside its original keeps its id: each row says which directory it is
    if (r.ref !== r.id) line(td_run, "directory " + r.directory + " (another run directory holds this id too)", "sub");
    if (r.fleet) line(td_run, r.fleet, "sub");
    cell(tr, r.state + (r.problem ? ": " + r.problem : ""), r.state);
    const td_prog = cell(tr, r.phase ? r.phase + " (" + r.phase_index + " of " + r.phases + ")" : null);
    if (r.round != null) line(td_prog, "round " + r.round + " of ≤ " + r.max_rounds + ", " + r.cells_done + " of "
                              + r.cells_per_round + " cells done");
    const parts = (r.parts || []).map(p => p.name + ": " + fmt(p.iops)).join("; ");
    const td_iops = cell(tr, r.iops == null ? null : (r.last_cell ? r.last_cell + ": " : "") + fmt(r.iops)
                         + (parts ? " (" + parts + ")" : ""), "long");
    const lv = r.live;
    if (lv) { const d = document.createElement("div"); d.className = "live";
      const lp = Object.entries(lv.parts || {}).map(([n, v]) => n + ": " + fmt(v)).join("; ");
      d.textContent = "now " + lv.cell + (lv.iops == null
        ? ", running for " + Math.floor(lv.running_s || 0) + " s (IOPS at the end of the cell)"
        : " at " + lv.elapsed_s.toFixed(1) + " s: " + fmt(lv.iops) + " IOPS" + (lv.lat_mean_us == null ? "" : ", mean "
          + fmt(lv.lat_mean_us) + " µs") + (lp ? " (" + lp + ")" : ""));
      if (td_iops.textContent === "—") td_iops.textContent = ""; td_iops.appendChild(d); }
    cell(tr, fmt(r.lat_mean_us), "num"); cell(tr, r.p99_note || fmt(r.p99_us), "num"); cell(tr, fmt(r.lat_max_us), "num");
    const s = r.steady;
    cell(tr, !s ? null : r.state !== "running" && s.run ? RUN_STEADY[s.run] || s.run
         : s.reached ? "reached" : s.evaluated ? s.passing + " of " + s.variables + " variables pass"
         : "not evaluated yet" + (r.stop_reason ? "; " + r.stop_reason : ""));
    cell(tr, r.eta_s == null ? null : "≤ " + Math.ceil(r.eta_s) + " s", "num");
    const td = cell(tr, "", "long"); for (const rep of r.reports) { const a = document.createElement("a");
      a.href = rep.href; a.textContent = rep.name; td.appendChild(a); td.appendChild(document.createTextNode(" ")); }
    body.appendChild(tr);
  }
  document.getElementById("updated").textContent = clock(new Date());
}
poller("/api/runs", render, %(poll)d);
</script></body></html>
"""

RUN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>iolab watch: %(title)s</title><link rel="icon" href="data:,">%(style)s</head>
<body><p><a href="/">all runs</a></p><h1 id="title">%(title)s</h1>
<p id="summary"></p><p>Updated <span id="updated">never</span> (every %(poll)d ms; <span id="polls">0</span> updates).
Read-only view of the run store.</p>
<h2>Steady state</h2><div class="charts" id="tracking"></div>
<h2>Cell under way</h2><div class="charts" id="live"></div>
<h2>Last stored cell</h2><p id="lastcell"></p><div class="charts" id="last"></div>
<div id="splitbox"><h2>Per host / path</h2><div class="charts" id="split"></div></div>
<script>%(chart)s
const RUN = %(run)s; let polls = 0;
function unit(metric) { return /mbps$/.test(metric) ? "MB/s" : /iops/.test(metric) ? "IOPS" : /_us$/.test(metric) ? "µs" : metric; }
function put(id, figs) { const box = document.getElementById(id); box.replaceChildren(...figs); }
function render(d) {
  const r = d.summary, s = r.steady || {};
  document.getElementById("summary").textContent = [r.test + " on " + r.target, r.state + (r.problem ? ": " + r.problem : ""),
    r.phase ? "phase " + r.phase + " (" + r.phase_index + " of " + r.phases + ")" : null,
    r.round != null ? "round " + r.round + " of ≤ " + r.max_rounds : null,
    r.state !== "running" && s.run ? "steady state " + (RUN_STEADY[s.run] || s.run)
    : s.reached ? "steady state reached" : s.evaluated ? s.passing + " of " + s.variables + " tracking variables pass" : null,
    r.eta_s == null ? null : "≤ " + Math.ceil(r.eta_s) + " s of measurement left"].filter(Boolean).join(" · ");
  const det = d.detail || {phases: []}, tr = [];
  for (const ph of det.phases) for (const t of ph.tracking) {
    const b = t.band, series = [{name: t.name, points: t.points}];
    if (b) series.push({name: "fit over the window", points: b.fit, dash: "4 3", line_only: true, color: "#777"});
    tr.push(chart(t.name + (t.name.includes(ph.name) ? "" : " (" + ph.name + ")") + " per round" + (b ? "; band: window average ± half the allowed range, rounds "
      + b.rounds[0] + "–" + b.rounds[1] + (b.range_ok && b.slope_ok ? " (passes)" : " (does not pass)") : "; not evaluated yet"),
      series, {xlabel: "round", ylabel: unit(t.metric), whole_x: true, band: b && {x0: b.rounds[0], x1: b.rounds[1], low: b.low, high: b.high,
      ok: b.range_ok && b.slope_ok}})); }
  put("tracking", tr.length ? tr : [chart("no tracking variable in this run's plan", [])]);
  const lv = det.live, samples = (lv && lv.samples) || [];
  const names = [...new Set(samples.flatMap(q => Object.keys(q[2] || {})))];
  put("live", [chart(lv ? lv.cell + ": live IOPS per report" + (!samples.length ? " (running for " + Math.floor(lv.running_s || 0)
      + " s; fio reports once a second, a hosts run only at the end of the cell)" : "") : "no cell under way",
    [{name: "total", points: samples.map(q => [q[0], q[1]])}, ...names.map(n => ({name: n, points: samples.map(q => [q[0], (q[2] || {})[n]])}))],
    {xlabel: "seconds into the cell", ylabel: "IOPS", empty: lv ? "no report yet" : "no cell under way"}),
    chart(lv ? lv.cell + ": mean latency per report (µs)" : "no cell under way",
      [{name: "mean", points: samples.filter(q => q[3] != null).map(q => [q[0], q[3]])}],
      {xlabel: "seconds into the cell", ylabel: "µs", empty: lv ? "no latency report yet" : "no cell under way"})]);
  const c = det.last_cell;
  document.getElementById("lastcell").textContent = c ? c.key + " (phase " + c.phase + ", round " + c.round + "): " + fmt(c.iops)
    + " IOPS, mean latency " + fmt(c.lat_mean_us) + " µs, p99 " + (c.p99_note || fmt(c.p99_us) + " µs") + ", max " + fmt(c.lat_max_us) + " µs"
    + (c.parts.length ? "; " + c.parts.map(p => p.name + ": " + fmt(p.iops) + " IOPS, mean " + fmt(p.lat_mean_us) + " µs").join("; ") : "") : "none yet";
  const ser = c ? c.series : [];
  put("last", [chart("IOPS per second", [{name: "IOPS", points: ser.map(q => [q[0], q[1]])}], {xlabel: "second", ylabel: "IOPS", whole_x: true,
      empty: c ? "no per-second series stored for this cell" : "no cell stored yet"}),
    chart("latency per second (µs)", [{name: "mean", points: ser.map(q => [q[0], q[2]])}, {name: "max", points: ser.map(q => [q[0], q[3]])}],
      {xlabel: "second", ylabel: "µs", whole_x: true, empty: c ? "no per-second latency stored for this cell" : "no cell stored yet"})]);
  const split = det.phases.flatMap(ph => ph.split), parts = [...new Set(split.flatMap(x => Object.keys(x.parts)))];
  document.getElementById("splitbox").hidden = !split.length;
  put("split", split.length ? [chart("IOPS of each host / path, cell by cell (1 = the first stored cell)",
    parts.map(n => ({name: n, points: split.map((x, i) => [i + 1, x.parts[n]])})), {xlabel: "cell", ylabel: "IOPS", whole_x: true})] : []);
  document.getElementById("updated").textContent = clock(new Date());
  document.getElementById("polls").textContent = ++polls;
}
poller("/api/runs/" + encodeURIComponent(RUN), render, %(poll)d);
</script></body></html>
"""


def list_page(poll_ms: int) -> bytes:
    return (LIST_PAGE % {"style": STYLE, "chart": CHART_JS, "poll": poll_ms}).encode()


def run_page(run_id: str, poll_ms: int) -> bytes:
    # the id inside the script as a JSON string, with "<" escaped so no "</script>" can end it
    run = json.dumps(run_id).replace("<", "\\u003c")
    return (
        RUN_PAGE % {"style": STYLE, "chart": CHART_JS, "poll": poll_ms, "title": html.escape(run_id), "run": run}
    ).encode()
