//! A simulated drive of either kind (SSD or HDD) behind one interface, and the raw JSON
//! result of a run on it (what iolab stores verbatim as the engine's output).

use serde_json::{json, Value};

use crate::config::{self, DriveConfig, UNIT};
use crate::driver::{self, Device, RunResult, RunSpec, Trace, NS};
use crate::hdd::Hdd;
use crate::ssd::{self, Ssd};
use crate::{ftl, ENGINE, VERSION};

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
        self.run_paths(spec, &[], progress)
    }

    /// A run whose outstanding IO comes in over several host paths (see `driver::run_paths`).
    pub fn run_paths(
        &mut self,
        spec: &RunSpec,
        paths: &[u32],
        progress: driver::Progress,
    ) -> Result<RunResult, String> {
        match self {
            Drive::Ssd(s) => driver::run_paths(s.as_mut(), spec, paths, progress),
            Drive::Hdd(h) => driver::run_paths(h.as_mut(), spec, paths, progress),
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
                put("op_for_gc", s.cfg.op_for_gc());
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
            // Row i is the virtual time (i s, i + 1 s]; the last one ends with the run, so it
            // is partial when the runtime is not a whole number of seconds (span_s < 1): its
            // rates are per second of the time it covers.
            let t_end = ((i + 1) as f64).min(rt.max(i as f64 + 1e-9));
            let width = (t_end - i as f64).max(1e-9);
            let n = b.reads + b.writes;
            json!([
                t_end,
                b.reads as f64 / width,
                b.writes as f64 / width,
                b.bytes as f64 / width / 1e6,
                (n > 0).then(|| b.lat_sum_ns as f64 / n as f64 / 1000.0),
                (n > 0).then(|| b.lat_max_ns as f64 / 1000.0),
                width
            ])
        })
        .collect();
    let mut counters = drive.counters(before);
    counters.insert("virtual_seconds".into(), json!(rt));
    let mut out = json!({
        "engine": ENGINE,
        "version": VERSION,
        "drive": config::describe(&drive.config()),
        "start_s": res.start_ns as f64 / NS as f64,
        "runtime_s": rt,
        "read": op_json(&res.read, rt),
        "write": op_json(&res.write, rt),
        "series_columns": ["t_end_s", "read_iops", "write_iops", "mbps", "lat_mean_us", "lat_max_us", "span_s"],
        "series": series,
        "counters": counters,
    });
    if !res.paths.is_empty() {
        out["paths"] = res
            .paths
            .iter()
            .map(|p| json!({"read": op_json(&p.read, rt), "write": op_json(&p.write, rt)}))
            .collect();
    }
    out
}
