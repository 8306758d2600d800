//! What the driver, its IO sources and its host paths share, and what a drive model offers
//! them: the `Device` trait, a workload (`RunSpec`, a `Trace`) and a run's results. Kept apart
//! from driver.rs so that the driver, ports.rs and source.rs depend on it and not on each
//! other.

use crate::hist::Hist;

pub const NS: u64 = 1_000_000_000;

/// The id a device gives a completion of its own background work (an HDD destaging its
/// write cache): it moves the clock but is no host IO.
pub const INTERNAL: u32 = u32::MAX;

/// Progress: called about every 0.2 s of wall time with (virtual seconds elapsed, IOPS so
/// far); returning false aborts the run (Ctrl-C).
pub type Progress<'a> = &'a mut dyn FnMut(f64, f64) -> bool;

/// What the driver needs from a drive model.
pub trait Device {
    /// The drive's virtual clock (ns); a run starts here and leaves it at its end.
    fn clock(&self) -> u64;
    fn set_clock(&mut self, t: u64);
    /// Bytes addressable by the host.
    fn capacity(&self) -> u64;
    /// Entropy of the data the next writes carry (1 = incompressible).
    fn set_entropy(&mut self, e: f64);
    fn submit(&mut self, now: u64, write: bool, off: u64, len: u64, id: u32);
    /// The host port the next `submit` comes in on (a run over several paths, ports.rs);
    /// never called for a single-path run, which uses port 0. A drive that models no
    /// per-port link ignores it.
    #[inline(always)]
    fn set_port(&mut self, _port: usize) {}
    /// Completion time of the earliest outstanding IO (or of the device's own work).
    fn next_completion(&self) -> Option<u64>;
    /// The earliest completion: (time, id), id `INTERNAL` for the device's own work.
    fn pop_completion(&mut self) -> (u64, u32);
    /// The workload's seed, mixed into the device's own random choices (GC victims).
    fn seed(&mut self, _seed: u64) {}
    /// The host sends nothing from `since` until `until`: background work may run.
    fn idle_until(&mut self, since: u64, until: u64);
    /// A hint that an IO at `off` comes soon: stage 0 a few IOs ahead, stage 1 closer.
    /// (The model is memory-bound on its maps; fetching them early hides the misses.)
    #[inline(always)]
    fn prefetch(&self, _off: u64, _stage: u32) {}
}

#[inline(always)]
pub fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults and has no visible effect.
    unsafe {
        core::arch::x86_64::_mm_prefetch(
            p as *const T as *const i8,
            core::arch::x86_64::_MM_HINT_T0,
        )
    }
}

/// `prefetch` of any address, in the map or not: a prefetch never faults.
#[inline(always)]
pub fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `prefetch`; the pointer is not dereferenced.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0)
    }
}

#[derive(Clone, Debug)]
pub struct StreamSpec {
    pub rnd: bool,
    pub write: bool,
    pub bs: u64,
    pub share: f64,
}

#[derive(Clone, Debug)]
pub struct RunSpec {
    pub streams: Vec<StreamSpec>,
    pub oio: u32,
    pub active_range: f64,
    pub entropy: f64,
    pub rate_iops: Option<f64>,
    pub duration_ns: Option<u64>,
    pub bytes_budget: Option<u64>,
    pub seed: u64,
    /// Skewed random offsets: (share of the random IOs, share of the active range) per zone,
    /// zones laid out from LBA 0 in order (fio's `random_distribution=zoned`). Empty: uniform.
    pub zones: Vec<(f64, f64)>,
}

impl RunSpec {
    /// One stream at `oio` outstanding over the whole drive, incompressible, seed 0 and no end
    /// yet: callers add a duration or a byte budget (the examples' and tests' common workload).
    pub fn single(rnd: bool, write: bool, bs: u64, oio: u32) -> RunSpec {
        RunSpec {
            streams: vec![StreamSpec {
                rnd,
                write,
                bs,
                share: 1.0,
            }],
            oio,
            active_range: 1.0,
            entropy: 1.0,
            rate_iops: None,
            duration_ns: None,
            bytes_budget: None,
            seed: 0,
            zones: vec![],
        }
    }
}

/// A timestamped IO list replayed open-loop (times from the start of the run).
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub times_ns: Vec<u64>,
    pub write: Vec<bool>,
    pub off: Vec<u64>,
    pub len: Vec<u64>,
}

#[derive(Clone, Debug, Default)]
pub struct OpResult {
    pub ios: u64,
    pub bytes: u64,
    pub hist: Hist,
}

impl OpResult {
    #[inline(always)]
    pub fn record(&mut self, bytes: u64, lat: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.hist.record(lat);
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct SecBucket {
    pub reads: u64,
    pub writes: u64,
    pub bytes: u64,
    pub lat_sum_ns: u128,
    pub lat_max_ns: u64,
}

#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub read: OpResult,
    pub write: OpResult,
    pub start_ns: u64,
    pub end_ns: u64,
    pub series: Vec<SecBucket>,
    /// Per path when the run came in over several (`driver::run_paths`); empty for one path.
    pub paths: Vec<PathResult>,
}

impl RunResult {
    pub fn runtime_s(&self) -> f64 {
        (self.end_ns - self.start_ns) as f64 / NS as f64
    }
    pub fn iops(&self) -> f64 {
        (self.read.ios + self.write.ios) as f64 / self.runtime_s().max(1e-12)
    }
}

pub fn validate(spec: &RunSpec, capacity: u64) -> Result<(), String> {
    if spec.streams.is_empty() {
        return Err("workload has no streams".into());
    }
    if spec.oio == 0 {
        return Err("outstanding IO must be at least 1".into());
    }
    if !(spec.active_range > 0.0 && spec.active_range <= 1.0) {
        return Err(format!(
            "active range {} must be in (0, 1]",
            spec.active_range
        ));
    }
    if spec.duration_ns.is_none() && spec.bytes_budget.is_none() {
        return Err("workload needs a duration or a byte budget".into());
    }
    if !spec.zones.is_empty() {
        let ok = spec
            .zones
            .iter()
            .all(|&(io, span)| io >= 0.0 && span > 0.0 && io.is_finite() && span.is_finite());
        let io: f64 = spec.zones.iter().map(|z| z.0).sum();
        let span: f64 = spec.zones.iter().map(|z| z.1).sum();
        if !ok || (io - 1.0).abs() > 1e-6 || (span - 1.0).abs() > 1e-6 {
            return Err(format!(
                "zones {:?}: IO shares and range shares must each add up to 1",
                spec.zones
            ));
        }
    }
    if let Some(r) = spec.rate_iops {
        if !(r > 0.0 && r.is_finite()) {
            return Err(format!("rate limit {r} IOPS must be greater than zero"));
        }
    }
    let range = (capacity as f64 * spec.active_range) as u64;
    for s in &spec.streams {
        if s.bs == 0 || s.bs % 512 != 0 {
            return Err(format!(
                "block size {} B must be a positive multiple of 512 B",
                s.bs
            ));
        }
        if s.bs > range {
            return Err(format!(
                "block size {} B exceeds the active range of {} B",
                s.bs, range
            ));
        }
    }
    Ok(())
}

/// What one path carried: its IOs by direction.
#[derive(Clone, Debug, Default)]
pub struct PathResult {
    pub read: OpResult,
    pub write: OpResult,
}

impl PathResult {
    #[inline]
    pub fn record(&mut self, write: bool, bytes: u64, lat: u64) {
        if write {
            &mut self.write
        } else {
            &mut self.read
        }
        .record(bytes, lat);
    }
}
