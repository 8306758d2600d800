//! The virtual-time driver: turns a workload (stream mix, outstanding IO, optional rate, a
//! duration or byte budget) or a timestamped trace into IO submissions on a `Device`, and
//! records every IO's latency into log-linear histograms and a per-virtual-second series.
//!
//! Events are processed in time order: the next arrival (when a slot is free) or the next
//! completion, whichever is earlier. Closed loop: a slot is refilled the moment its IO
//! completes. Open loop: arrivals are paced at 1/rate but never exceed the outstanding-IO
//! limit (as fio's rate_iops with an iodepth does).

use crate::hist::Hist;
use crate::ports::{PathResult, Ports};
use crate::source::{Source, TraceSource};

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
    /// Per path when the run came in over several (`ports::run_paths`); empty for one path.
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

pub fn run<D: Device>(
    dev: &mut D,
    spec: &RunSpec,
    progress: Progress,
) -> Result<RunResult, String> {
    crate::ports::run_paths(dev, spec, &[], progress)
}

pub fn replay<D: Device>(
    dev: &mut D,
    trace: &Trace,
    oio: u32,
    entropy: f64,
    progress: Progress,
) -> Result<RunResult, String> {
    let n = trace.times_ns.len();
    if n == 0 || trace.write.len() != n || trace.off.len() != n || trace.len.len() != n {
        return Err("trace arrays are empty or of different lengths".into());
    }
    let cap = dev.capacity();
    for i in 0..n {
        if i > 0 && trace.times_ns[i] < trace.times_ns[i - 1] {
            return Err(format!("trace IO {i}: timestamps must not go backwards"));
        }
        if trace.len[i] == 0 || trace.off[i] + trace.len[i] > cap {
            return Err(format!(
                "trace IO {i}: offset {} + size {} is outside the drive's {cap} B",
                trace.off[i], trace.len[i]
            ));
        }
    }
    dev.set_entropy(entropy);
    let mut src = TraceSource::new(trace, dev.clock());
    drive(
        dev,
        &mut src,
        Ports::new(&[], oio.max(1))?,
        None,
        None,
        progress,
    )
}

/// The series row of an instant `dt` ns after the start: row i covers (i s, i + 1 s], so an
/// IO completing exactly at a whole second counts in the second it ends.
fn second_of(dt: u64) -> usize {
    (dt.saturating_sub(1) / NS) as usize
}

pub(crate) fn drive<D: Device, S: Source>(
    dev: &mut D,
    src: &mut S,
    mut ports: Ports,
    duration_ns: Option<u64>,
    budget: Option<u64>,
    progress: Progress,
) -> Result<RunResult, String> {
    let oio = ports.oio() as usize;
    let start = dev.clock();
    let end = duration_ns.map_or(u64::MAX, |d| start + d);
    let budget = budget.unwrap_or(u64::MAX);
    let mut arrival = vec![0u64; oio];
    let mut is_write = vec![false; oio];
    let mut size = vec![0u64; oio];
    let mut free: Vec<u32> = (0..oio as u32).rev().collect();
    let mut res = RunResult {
        start_ns: start,
        paths: vec![PathResult::default(); ports.len()],
        ..Default::default()
    };
    let mut now = start;
    let mut issued = 0u64;
    let mut stop = false;
    let mut budget_hit = false;
    let mut last_host = start;
    let mut last_own = start;
    let mut count = 0u64;
    let wall = std::time::Instant::now();
    let mut last_report = 0.0f64;

    loop {
        let t_cmp = dev.next_completion();
        if !stop && !free.is_empty() {
            match src.peek(now) {
                None => stop = true,
                Some(t_arr) if t_arr >= end => stop = true,
                Some(t_arr) => {
                    if t_cmp.is_none_or(|c| t_arr <= c) {
                        if free.len() == oio && t_arr > now {
                            dev.idle_until(now, t_arr);
                        }
                        now = t_arr;
                        let (w, off, len) = src.take(now, dev);
                        let id = ports.take(&mut free);
                        if let Some(p) = ports.path_of(id) {
                            dev.set_port(p);
                        }
                        arrival[id as usize] = now;
                        is_write[id as usize] = w;
                        size[id as usize] = len;
                        dev.submit(now, w, off, len, id);
                        issued += len;
                        if issued >= budget {
                            stop = true;
                            budget_hit = true;
                        }
                        continue;
                    }
                }
            }
        }
        let Some(_) = t_cmp else { break };
        let (t, id) = dev.pop_completion();
        now = t;
        if id == INTERNAL {
            last_own = t;
            continue;
        }
        last_host = t;
        let lat = t - arrival[id as usize];
        let bytes = size[id as usize];
        let op = if is_write[id as usize] {
            &mut res.write
        } else {
            &mut res.read
        };
        op.ios += 1;
        op.bytes += bytes;
        op.hist.record(lat);
        if let Some(p) = ports.path_of(id) {
            res.paths[p].record(is_write[id as usize], bytes, lat);
        }
        // Second i of the series is the virtual time (i s, i + 1 s] from the start, whatever
        // the run's nominal length: IOs completing after a timed run's end (the drain of what
        // was in flight) count in the seconds they complete in, not in its nominal last one.
        let sec = second_of(t - start);
        if sec >= res.series.len() {
            res.series.resize(sec + 1, SecBucket::default());
        }
        let b = &mut res.series[sec];
        if is_write[id as usize] {
            b.writes += 1;
        } else {
            b.reads += 1;
        }
        b.bytes += bytes;
        b.lat_sum_ns += lat as u128;
        b.lat_max_ns = b.lat_max_ns.max(lat as u64);
        free.push(id);
        count += 1;
        if count & 0xFFFF == 0 {
            let w = wall.elapsed().as_secs_f64();
            if w - last_report >= 0.2 {
                last_report = w;
                let v = (now - start) as f64 / NS as f64;
                let iops = (res.read.ios + res.write.ios) as f64 / v.max(1e-9);
                if !progress(v, iops) {
                    // Leave the drive consistent for the next run: no IO left in flight.
                    while dev.next_completion().is_some() {
                        now = now.max(dev.pop_completion().0);
                    }
                    dev.set_clock(now);
                    return Err("interrupted".into());
                }
            }
        }
    }
    // A timed run lasts its duration even when the host went quiet before the end, but a
    // run that spent its byte budget ends with its last IO: its rates are per true duration.
    let mut fin = last_host;
    if duration_ns.is_some() && !budget_hit && fin < end {
        dev.idle_until(now.min(end), end);
        fin = end;
    }
    // The run also lasts until the device's own work for it is done (an HDD destaging what
    // the run left in its write cache; the next run starts with the cache empty): a write
    // cache lends a run the time it takes to write the cache out, and a run's rates would
    // otherwise exceed what the media can sustain.
    fin = fin.max(last_own);
    dev.set_clock(fin.max(now));
    res.end_ns = fin.max(start + 1);
    // The series covers the whole runtime, quiet seconds at its end included; its last
    // second is partial when the runtime is not a whole number of seconds.
    let secs = second_of(res.end_ns - start) + 1;
    if res.series.len() < secs {
        res.series.resize(secs, SecBucket::default());
    }
    // Always one report with the final figures (the periodic ones depend on wall time).
    if !progress(res.runtime_s(), res.iops()) {
        return Err("interrupted".into());
    }
    Ok(res)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Completes every IO 10 µs after submission and counts where the IOs went.
    pub(crate) struct Counter {
        pub(crate) now: u64,
        pub(crate) pending: Vec<(u64, u32)>,
        pub(crate) offsets: Vec<u64>,
    }

    impl Device for Counter {
        fn clock(&self) -> u64 {
            self.now
        }
        fn set_clock(&mut self, t: u64) {
            self.now = t;
        }
        fn capacity(&self) -> u64 {
            1 << 30
        }
        fn set_entropy(&mut self, _e: f64) {}
        fn submit(&mut self, now: u64, _write: bool, off: u64, len: u64, id: u32) {
            assert!(off.is_multiple_of(len) && off + len <= self.capacity());
            self.offsets.push(off);
            self.pending.push((now + 10_000, id));
        }
        fn next_completion(&self) -> Option<u64> {
            self.pending.iter().map(|p| p.0).min()
        }
        fn pop_completion(&mut self) -> (u64, u32) {
            let i = (0..self.pending.len())
                .min_by_key(|&i| self.pending[i].0)
                .unwrap();
            self.pending.swap_remove(i)
        }
        fn idle_until(&mut self, _since: u64, _until: u64) {}
    }

    #[test]
    fn zoned_offsets_follow_the_io_shares_of_each_range() {
        let spec = RunSpec {
            streams: vec![
                StreamSpec {
                    rnd: true,
                    write: true,
                    bs: 4096,
                    share: 0.7,
                },
                StreamSpec {
                    rnd: true,
                    write: false,
                    bs: 65536,
                    share: 0.3,
                },
            ],
            oio: 4,
            active_range: 1.0,
            entropy: 1.0,
            rate_iops: None,
            duration_ns: None,
            bytes_budget: Some(400 << 20),
            seed: 3,
            zones: vec![(0.5, 0.05), (0.3, 0.15), (0.2, 0.8)],
        };
        let mut dev = Counter {
            now: 0,
            pending: vec![],
            offsets: vec![],
        };
        run(&mut dev, &spec, &mut |_, _| true).unwrap();
        let cap = dev.capacity() as f64;
        let n = dev.offsets.len() as f64;
        let share = |lo: f64, hi: f64| {
            dev.offsets
                .iter()
                .filter(|&&o| o as f64 >= lo * cap && (o as f64) < hi * cap)
                .count() as f64
                / n
        };
        assert!(n > 10_000.0);
        assert!(
            (share(0.0, 0.05) - 0.5).abs() < 0.02,
            "{}",
            share(0.0, 0.05)
        );
        assert!(
            (share(0.05, 0.2) - 0.3).abs() < 0.02,
            "{}",
            share(0.05, 0.2)
        );
        assert!((share(0.2, 1.0) - 0.2).abs() < 0.02, "{}", share(0.2, 1.0));
        let bad = RunSpec {
            zones: vec![(0.5, 0.5), (0.4, 0.5)],
            ..spec
        };
        assert!(validate(&bad, 1 << 30).is_err());
    }
}
