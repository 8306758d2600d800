//! iolab's simulated drives (SSD FTL, HDD) in virtual time. The Python surface is
//! deliberately narrow (see `src/iolab/_sim.pyi`): build a drive from a preset and
//! parameters, run a workload or replay a trace on it, purge, trim, idle, save and load.
//! Results come back as JSON, which iolab stores verbatim as the raw engine output.

pub mod config;
pub mod driver;
pub mod flash;
pub mod ftl;
pub mod hdd;
pub mod hist;
pub mod oracle;
pub mod rng;
pub mod ssd;
pub mod state;

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use serde_json::{json, Value};

use config::{DriveConfig, UNIT};
use driver::{Device, RunResult, RunSpec, StreamSpec, Trace, NS};
use hdd::Hdd;
use ssd::Ssd;

pub const ENGINE: &str = "iolab-sim";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A simulated drive of either kind.
pub enum Drive {
    Ssd(Box<Ssd>),
    Hdd(Box<Hdd>),
}

/// Counter values captured before a run, to report the run's own share.
#[derive(Clone, Copy)]
pub struct Snapshot {
    ftl: ftl::Counters,
    host: ssd::HostCounters,
    hdd: (u64, u64),
}

impl Drive {
    pub fn new(cfg: DriveConfig) -> Drive {
        match cfg {
            DriveConfig::Ssd(c) => Drive::Ssd(Box::new(Ssd::new(c))),
            DriveConfig::Hdd(c) => Drive::Hdd(Box::new(Hdd::new(c))),
        }
    }

    pub fn config(&self) -> DriveConfig {
        match self {
            Drive::Ssd(s) => DriveConfig::Ssd(s.cfg.clone()),
            Drive::Hdd(h) => DriveConfig::Hdd(h.cfg.clone()),
        }
    }

    pub fn clock(&self) -> u64 {
        match self {
            Drive::Ssd(s) => s.clock(),
            Drive::Hdd(h) => h.clock(),
        }
    }

    pub fn capacity(&self) -> u64 {
        match self {
            Drive::Ssd(s) => s.capacity(),
            Drive::Hdd(h) => h.capacity(),
        }
    }

    pub fn snapshot(&self) -> Snapshot {
        match self {
            Drive::Ssd(s) => Snapshot {
                ftl: s.ftl.c,
                host: s.host,
                hdd: (0, 0),
            },
            Drive::Hdd(h) => Snapshot {
                ftl: Default::default(),
                host: Default::default(),
                hdd: (h.seeks, h.cache_hits),
            },
        }
    }

    pub fn run(&mut self, spec: &RunSpec, progress: driver::Progress) -> Result<RunResult, String> {
        match self {
            Drive::Ssd(s) => driver::run(s.as_mut(), spec, progress),
            Drive::Hdd(h) => driver::run(h.as_mut(), spec, progress),
        }
    }

    pub fn replay(
        &mut self,
        trace: &Trace,
        oio: u32,
        entropy: f64,
        progress: driver::Progress,
    ) -> Result<RunResult, String> {
        match self {
            Drive::Ssd(s) => driver::replay(s.as_mut(), trace, oio, entropy, progress),
            Drive::Hdd(h) => driver::replay(h.as_mut(), trace, oio, entropy, progress),
        }
    }

    /// Purge to fresh-out-of-box; returns the virtual seconds it took.
    pub fn purge(&mut self) -> f64 {
        match self {
            Drive::Ssd(s) => {
                let t0 = s.now;
                s.purge();
                (s.now - t0) as f64 / NS as f64
            }
            Drive::Hdd(_) => 0.0,
        }
    }

    /// The host's volatile-write-cache switch (WCE); see ssd.rs and hdd.rs for its effect.
    pub fn set_write_cache(&mut self, enabled: bool) {
        match self {
            Drive::Ssd(s) => s.write_cache = enabled,
            Drive::Hdd(h) => h.write_cache = enabled,
        }
    }

    pub fn write_cache(&self) -> bool {
        match self {
            Drive::Ssd(s) => s.write_cache,
            Drive::Hdd(h) => h.write_cache,
        }
    }

    pub fn idle(&mut self, seconds: f64) {
        let t0 = self.clock();
        let t1 = t0 + (seconds.max(0.0) * NS as f64) as u64;
        match self {
            Drive::Ssd(s) => {
                s.idle_until(t0, t1);
                s.set_clock(t1);
            }
            Drive::Hdd(h) => h.set_clock(t1),
        }
    }

    /// The drive's counters: this run's share (from `before`) and its present state.
    pub fn counters(&self, before: &Snapshot) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        let mut put = |k: &str, v: f64| {
            m.insert(k.to_string(), json!(v));
        };
        match self {
            Drive::Ssd(s) => {
                let cb = s.cfg.chunk_bytes() as f64;
                let (c, h) = (s.ftl.c, s.host);
                let (b, bh) = (before.ftl, before.host);
                let flash_chunks = |c: &ftl::Counters| c.host_chunks + c.gc_chunks + c.evict_chunks;
                let host_w = (h.write_bytes - bh.write_bytes) as f64;
                let flash_w = (flash_chunks(&c) - flash_chunks(&b)) as f64 * cb;
                put("host_write_bytes", host_w);
                put("host_read_bytes", (h.read_bytes - bh.read_bytes) as f64);
                put("flash_write_bytes", flash_w);
                if host_w > 0.0 {
                    put("waf", flash_w / host_w);
                }
                put("gc_runs", (c.gc_runs - b.gc_runs) as f64);
                put(
                    "gc_copied_pages",
                    (c.gc_chunks - b.gc_chunks) as f64 * cb / UNIT as f64,
                );
                put(
                    "slc_evicted_pages",
                    (c.evict_chunks - b.evict_chunks) as f64 * cb / UNIT as f64,
                );
                put("slc_evictions", (c.slc_evictions - b.slc_evictions) as f64);
                put("erases", (c.erases - b.erases) as f64);
                put("rmw_reads", (c.rmw_reads - b.rmw_reads) as f64);
                put("background_steps", (c.bg_steps - b.bg_steps) as f64);
                let total_host = h.write_bytes as f64;
                let total_flash = flash_chunks(&c) as f64 * cb;
                put("host_write_bytes_total", total_host);
                put("flash_write_bytes_total", total_flash);
                if total_host > 0.0 {
                    put("waf_total", total_flash / total_host);
                }
                let er = &s.ftl.erases;
                put("erase_min", *er.iter().min().unwrap_or(&0) as f64);
                put("erase_max", *er.iter().max().unwrap_or(&0) as f64);
                put(
                    "erase_mean",
                    er.iter().map(|&x| x as f64).sum::<f64>() / er.len().max(1) as f64,
                );
                put("free_blocks", s.ftl.free_blocks() as f64);
                put("ftl_blocks", s.cfg.n_main() as f64);
                put("op", s.cfg.op());
                put("spare_factor", s.cfg.spare_factor());
            }
            Drive::Hdd(h) => {
                put("seeks", (h.seeks - before.hdd.0) as f64);
                put("cache_hits", (h.cache_hits - before.hdd.1) as f64);
            }
        }
        put("device_clock_s", self.clock() as f64 / NS as f64);
        m
    }
}

fn op_json(o: &driver::OpResult, runtime_s: f64) -> Value {
    let h = &o.hist;
    let mean = if o.ios > 0 {
        Some(h.sum_ns as f64 / o.ios as f64 / 1000.0)
    } else {
        None
    };
    json!({
        "ios": o.ios,
        "bytes": o.bytes,
        "iops": o.ios as f64 / runtime_s,
        "mbps": o.bytes as f64 / runtime_s / 1e6,
        "lat_mean_us": mean,
        "lat_min_us": (o.ios > 0).then(|| h.min_ns as f64 / 1000.0),
        "lat_max_us": (o.ios > 0).then(|| h.max_ns as f64 / 1000.0),
        "histogram_us": h.bins_us().iter().map(|(v, c)| json!([v, c])).collect::<Vec<_>>(),
    })
}

/// The raw result of one run: what iolab stores as `<tag>.json`.
pub fn result_json(drive: &Drive, res: &RunResult, before: &Snapshot) -> Value {
    let rt = res.runtime_s();
    let series: Vec<Value> = res
        .series
        .iter()
        .enumerate()
        .map(|(i, b)| {
            // The last second may be partial: rates are per second of the interval it covers.
            let t_end = ((i + 1) as f64).min(rt.max(i as f64 + 1e-9));
            let width = (t_end - i as f64).max(1e-9);
            let n = b.reads + b.writes;
            json!([
                t_end,
                b.reads as f64 / width,
                b.writes as f64 / width,
                b.bytes as f64 / width / 1e6,
                (n > 0).then(|| b.lat_sum_ns as f64 / n as f64 / 1000.0),
                (n > 0).then(|| b.lat_max_ns as f64 / 1000.0)
            ])
        })
        .collect();
    let mut counters = drive.counters(before);
    counters.insert("virtual_seconds".into(), json!(rt));
    json!({
        "engine": ENGINE,
        "version": VERSION,
        "drive": config::describe(&drive.config()),
        "start_s": res.start_ns as f64 / NS as f64,
        "runtime_s": rt,
        "read": op_json(&res.read, rt),
        "write": op_json(&res.write, rt),
        "series_columns": ["t_end_s", "read_iops", "write_iops", "mbps", "lat_mean_us", "lat_max_us"],
        "series": series,
        "counters": counters,
    })
}

// ---------------------------------------------------------------------------------------
// Python surface

fn value_err(e: String) -> PyErr {
    PyValueError::new_err(e)
}

#[pyclass(name = "Drive", module = "iolab._sim")]
struct PyDrive {
    d: Drive,
}

/// Runs `f` without the GIL, calling the Python `progress(virtual_s, iops)` now and then
/// (with the GIL, so Ctrl-C is noticed there).
fn with_progress<F>(py: Python<'_>, progress: Option<PyObject>, f: F) -> PyResult<Value>
where
    F: FnOnce(driver::Progress) -> Result<Value, String> + Send,
{
    let mut pending: Option<PyErr> = None;
    let out = py.allow_threads(|| {
        let mut cb = |v: f64, iops: f64| -> bool {
            Python::with_gil(|py| {
                if let Err(e) = py.check_signals() {
                    pending = Some(e);
                    return false;
                }
                if let Some(p) = &progress {
                    if let Err(e) = p.call1(py, (v, iops)) {
                        pending = Some(e);
                        return false;
                    }
                }
                true
            })
        };
        f(&mut cb)
    });
    if let Some(e) = pending {
        return Err(e);
    }
    out.map_err(|e| {
        if e == "interrupted" {
            PyKeyboardInterrupt::new_err("interrupted")
        } else {
            value_err(e)
        }
    })
}

#[pymethods]
impl PyDrive {
    #[new]
    #[pyo3(signature = (preset, params = Vec::new()))]
    fn new(preset: &str, params: Vec<(String, String)>) -> PyResult<Self> {
        let cfg = config::resolve(preset, &params).map_err(value_err)?;
        Ok(PyDrive { d: Drive::new(cfg) })
    }

    #[staticmethod]
    fn load(py: Python<'_>, path: &str) -> PyResult<Self> {
        let d = py.allow_threads(|| state::load(path)).map_err(value_err)?;
        Ok(PyDrive { d })
    }

    fn save(&mut self, py: Python<'_>, path: &str) -> PyResult<()> {
        let d = &mut self.d;
        py.allow_threads(|| state::save(d, path)).map_err(value_err)
    }

    fn describe(&self) -> String {
        config::describe(&self.d.config()).to_string()
    }

    fn purge(&mut self) -> f64 {
        self.d.purge()
    }

    fn trim(&mut self, offset: u64, length: u64) -> PyResult<()> {
        if offset
            .checked_add(length)
            .map_or(true, |e| e > self.d.capacity())
        {
            return Err(value_err(format!(
                "trim {offset}+{length} is outside the drive's {} B",
                self.d.capacity()
            )));
        }
        if let Drive::Ssd(s) = &mut self.d {
            s.trim(offset, length);
        }
        Ok(())
    }

    fn idle(&mut self, seconds: f64) {
        self.d.idle(seconds);
    }

    /// Switch the drive's volatile write cache (WCE); a new drive has it enabled.
    #[setter]
    fn set_write_cache(&mut self, enabled: bool) {
        self.d.set_write_cache(enabled);
    }

    #[getter]
    fn write_cache(&self) -> bool {
        self.d.write_cache()
    }

    #[getter]
    fn clock_s(&self) -> f64 {
        self.d.clock() as f64 / NS as f64
    }

    #[getter]
    fn capacity(&self) -> u64 {
        self.d.capacity()
    }

    fn counters(&self) -> String {
        let snap = self.d.snapshot();
        Value::Object(self.d.counters(&snap)).to_string()
    }

    fn memory_bytes(&self) -> usize {
        match &self.d {
            Drive::Ssd(s) => s.memory_bytes(),
            Drive::Hdd(_) => 0,
        }
    }

    /// FTL self-check (tests): every structure agrees with the others.
    fn check(&self) -> PyResult<()> {
        match &self.d {
            Drive::Ssd(s) => s.ftl.check().map_err(value_err),
            Drive::Hdd(_) => Ok(()),
        }
    }

    /// Keyword-only, so a call names every field of the workload and a reordering cannot
    /// silently swap two numbers.
    #[pyo3(signature = (*, streams, threads = 1, queue_depth = 1, active_range = 1.0, entropy = 1.0,
                        rate_iops = None, duration_s = None, bytes_budget = None, seed = 0, zones = Vec::new(),
                        progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        py: Python<'_>,
        streams: Vec<(String, String, u64, f64)>,
        threads: u32,
        queue_depth: u32,
        active_range: f64,
        entropy: f64,
        rate_iops: Option<f64>,
        duration_s: Option<f64>,
        bytes_budget: Option<u64>,
        seed: u64,
        zones: Vec<(f64, f64)>,
        progress: Option<PyObject>,
    ) -> PyResult<String> {
        let mut specs = Vec::new();
        for (access, op, bs, share) in streams {
            let rnd = match access.as_str() {
                "rnd" => true,
                "seq" => false,
                _ => {
                    return Err(value_err(format!(
                        "stream access {access:?}: use 'rnd' or 'seq'"
                    )))
                }
            };
            let write = match op.as_str() {
                "write" => true,
                "read" => false,
                _ => {
                    return Err(value_err(format!(
                        "stream op {op:?}: use 'read' or 'write'"
                    )))
                }
            };
            specs.push(StreamSpec {
                rnd,
                write,
                bs,
                share,
            });
        }
        if let Some(d) = duration_s {
            if !(d > 0.0 && d.is_finite()) {
                return Err(value_err(format!(
                    "duration {d} s must be greater than zero"
                )));
            }
        }
        let spec = RunSpec {
            streams: specs,
            oio: threads.saturating_mul(queue_depth),
            active_range,
            entropy,
            rate_iops,
            duration_ns: duration_s.map(|d| (d * NS as f64).round() as u64),
            bytes_budget,
            seed,
            zones,
        };
        let d = &mut self.d;
        let out = with_progress(py, progress, move |p| {
            let before = d.snapshot();
            let res = d.run(&spec, p)?;
            Ok(result_json(d, &res, &before))
        })?;
        Ok(out.to_string())
    }

    #[pyo3(signature = (times_s, writes, offsets, sizes, queue_depth, entropy = 1.0, progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn replay(
        &mut self,
        py: Python<'_>,
        times_s: Vec<f64>,
        writes: Vec<bool>,
        offsets: Vec<u64>,
        sizes: Vec<u64>,
        queue_depth: u32,
        entropy: f64,
        progress: Option<PyObject>,
    ) -> PyResult<String> {
        let t0 = times_s.first().copied().unwrap_or(0.0);
        let trace = Trace {
            times_ns: times_s
                .iter()
                .map(|t| ((t - t0).max(0.0) * NS as f64).round() as u64)
                .collect(),
            write: writes,
            off: offsets,
            len: sizes,
        };
        let d = &mut self.d;
        let out = with_progress(py, progress, move |p| {
            let before = d.snapshot();
            let res = d.replay(&trace, queue_depth, entropy, p)?;
            Ok(result_json(d, &res, &before))
        })?;
        Ok(out.to_string())
    }
}

/// All presets with their parameters (JSON).
#[pyfunction]
fn presets() -> String {
    config::presets_json().to_string()
}

/// Resolve a preset with parameters and describe the drive without building it (JSON).
#[pyfunction]
#[pyo3(signature = (preset, params = Vec::new()))]
fn describe(preset: &str, params: Vec<(String, String)>) -> PyResult<String> {
    let cfg = config::resolve(preset, &params).map_err(value_err)?;
    Ok(config::describe(&cfg).to_string())
}

/// Analytic WAF for uniform random single-page writes: policy 'greedy', 'fifo', 'random'.
#[pyfunction]
fn waf_oracle(policy: &str, alpha: f64, pages_per_block: f64) -> PyResult<f64> {
    if !(alpha > 1.0) {
        return Err(value_err(format!("alpha {alpha} must exceed 1")));
    }
    match policy {
        "greedy" => Ok(oracle::waf_greedy(alpha, pages_per_block)),
        "fifo" => Ok(oracle::waf_fifo(alpha)),
        "random" => Ok(oracle::waf_random(alpha)),
        _ => Err(value_err(format!(
            "policy {policy:?}: use greedy, fifo or random"
        ))),
    }
}

#[pymodule]
fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", VERSION)?;
    m.add("DEFAULT_PRESET", config::DEFAULT_PRESET)?;
    m.add_class::<PyDrive>()?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(waf_oracle, m)?)?;
    Ok(())
}
