//! The virtual-time driver: turns a workload (stream mix, outstanding IO, optional rate, a
//! duration or byte budget) or a timestamped trace into IO submissions on a `Device`, and
//! records every IO's latency into log-linear histograms and a per-virtual-second series.
//!
//! Events are processed in time order: the next arrival (when a slot is free) or the next
//! completion, whichever is earlier. Closed loop: a slot is refilled the moment its IO
//! completes. Open loop: arrivals are paced at 1/rate but never exceed the outstanding-IO
//! limit (as fio's rate_iops with an iodepth does).

use crate::ports::Ports;
use crate::source::{Source, StreamSource, TraceSource};
// The shared types live in workload.rs; they are re-exported here, where callers look for them.
pub use crate::workload::{
    prefetch, prefetch_ptr, validate, Device, OpResult, PathResult, Progress, RunResult, RunSpec,
    SecBucket, StreamSpec, Trace, INTERNAL, NS,
};

pub fn run<D: Device>(
    dev: &mut D,
    spec: &RunSpec,
    progress: Progress,
) -> Result<RunResult, String> {
    run_paths(dev, spec, &[], progress)
}

/// `run` with the outstanding IO coming in over several host paths into the one drive
/// (ports.rs): `paths[p]` of it are path p's. Empty: one path.
pub fn run_paths<D: Device>(
    dev: &mut D,
    spec: &RunSpec,
    paths: &[u32],
    progress: Progress,
) -> Result<RunResult, String> {
    validate(spec, dev.capacity())?;
    let ports = Ports::new(paths, spec.oio)?;
    dev.set_entropy(spec.entropy);
    dev.seed(spec.seed);
    let mut src = StreamSource::new(spec, dev.capacity(), dev.clock());
    drive(
        dev,
        &mut src,
        ports,
        spec.duration_ns,
        spec.bytes_budget,
        progress,
    )
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

/// The outstanding IO slots: each busy one's arrival time, direction and size (together:
/// one bounds check for the three, as each IO issued and completed reads or writes all of
/// them), and the free.
struct InFlight {
    io: Vec<Slot>,
    free: Vec<u32>,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    arrival: u64,
    size: u64,
    is_write: bool,
}

impl InFlight {
    fn new(oio: usize) -> InFlight {
        InFlight {
            io: vec![Slot::default(); oio],
            free: (0..oio as u32).rev().collect(),
        }
    }

    /// The source's next IO, issued at `now` on a free slot; returns its bytes.
    #[inline(always)]
    fn issue<D: Device, S: Source>(
        &mut self,
        dev: &mut D,
        src: &mut S,
        ports: &mut Ports,
        now: u64,
    ) -> u64 {
        let (w, off, len) = src.take(now, dev);
        let id = ports.take(&mut self.free);
        if let Some(p) = ports.path_of(id) {
            dev.set_port(p);
        }
        self.io[id as usize] = Slot {
            arrival: now,
            size: len,
            is_write: w,
        };
        dev.submit(now, w, off, len, id);
        len
    }

    /// Slot `id`'s IO completed at `t`: frees the slot; returns (write?, bytes, latency).
    #[inline(always)]
    fn complete(&mut self, id: u32, t: u64) -> (bool, u64, u64) {
        let s = self.io[id as usize];
        self.free.push(id);
        (s.is_write, s.size, t - s.arrival)
    }
}

impl RunResult {
    /// A host IO completed `dt` ns after the run's start, on `path` when the run has several.
    #[inline(always)]
    fn record(&mut self, dt: u64, write: bool, bytes: u64, lat: u64, path: Option<usize>) {
        if write {
            &mut self.write
        } else {
            &mut self.read
        }
        .record(bytes, lat);
        if let Some(p) = path {
            self.paths[p].record(write, bytes, lat);
        }
        // Second i of the series is the virtual time (i s, i + 1 s] from the start, whatever
        // the run's nominal length: IOs completing after a timed run's end (the drain of what
        // was in flight) count in the seconds they complete in, not in its nominal last one.
        let sec = second_of(dt);
        if sec >= self.series.len() {
            self.series.resize(sec + 1, SecBucket::default());
        }
        let b = &mut self.series[sec];
        if write {
            b.writes += 1;
        } else {
            b.reads += 1;
        }
        b.bytes += bytes;
        b.lat_sum_ns += lat as u128;
        b.lat_max_ns = b.lat_max_ns.max(lat);
    }
}

/// The run's instants: its start and nominal end, the present, and the last completions of
/// a host IO and of the device's own work.
struct Clock {
    start: u64,
    end: u64,
    now: u64,
    last_host: u64,
    last_own: u64,
}

/// Progress reports about every 0.2 s of wall time, checked every 65,536 completions.
struct Reports {
    wall: std::time::Instant,
    last: f64,
}

impl Reports {
    /// Reports progress when one is due; false when the caller aborts the run.
    #[inline(always)]
    fn tick(&mut self, count: u64, at: &Clock, res: &RunResult, progress: &mut Progress) -> bool {
        if count & 0xFFFF != 0 {
            return true;
        }
        let w = self.wall.elapsed().as_secs_f64();
        if w - self.last < 0.2 {
            return true;
        }
        self.last = w;
        let v = (at.now - at.start) as f64 / NS as f64;
        progress(v, (res.read.ios + res.write.ios) as f64 / v.max(1e-9))
    }
}

pub(crate) fn drive<D: Device, S: Source>(
    dev: &mut D,
    src: &mut S,
    mut ports: Ports,
    duration_ns: Option<u64>,
    budget: Option<u64>,
    mut progress: Progress,
) -> Result<RunResult, String> {
    let oio = ports.oio() as usize;
    let start = dev.clock();
    let mut at = Clock {
        start,
        end: duration_ns.map_or(u64::MAX, |d| start + d),
        now: start,
        last_host: start,
        last_own: start,
    };
    let budget = budget.unwrap_or(u64::MAX);
    let mut slots = InFlight::new(oio);
    let mut res = RunResult {
        start_ns: start,
        paths: vec![PathResult::default(); ports.len()],
        ..Default::default()
    };
    let (mut issued, mut count) = (0u64, 0u64);
    let (mut stop, mut budget_hit) = (false, false);
    let mut reports = Reports {
        wall: std::time::Instant::now(),
        last: 0.0,
    };
    loop {
        let t_cmp = dev.next_completion();
        if !stop && !slots.free.is_empty() {
            match src.peek(at.now) {
                None => stop = true,
                Some(t_arr) if t_arr >= at.end => stop = true,
                Some(t_arr) if t_cmp.is_none_or(|c| t_arr <= c) => {
                    if slots.free.len() == oio && t_arr > at.now {
                        dev.idle_until(at.now, t_arr);
                    }
                    at.now = t_arr;
                    issued += slots.issue(dev, src, &mut ports, at.now);
                    if issued >= budget {
                        stop = true;
                        budget_hit = true;
                    }
                    continue;
                }
                Some(_) => {}
            }
        }
        if t_cmp.is_none() {
            break;
        }
        let (t, id) = dev.pop_completion();
        at.now = t;
        if id == INTERNAL {
            at.last_own = t;
            continue;
        }
        at.last_host = t;
        let (w, bytes, lat) = slots.complete(id, t);
        res.record(t - start, w, bytes, lat, ports.path_of(id));
        count += 1;
        if !reports.tick(count, &at, &res, &mut progress) {
            // Leave the drive consistent for the next run: no IO left in flight.
            while dev.next_completion().is_some() {
                at.now = at.now.max(dev.pop_completion().0);
            }
            dev.set_clock(at.now);
            return Err("interrupted".into());
        }
    }
    let timed = duration_ns.is_some() && !budget_hit;
    finish(dev, res, &at, timed, progress)
}

/// The run's end: its runtime, the device's clock and the series' quiet last seconds, and
/// the final progress report.
fn finish<D: Device>(
    dev: &mut D,
    mut res: RunResult,
    at: &Clock,
    timed: bool,
    progress: Progress,
) -> Result<RunResult, String> {
    // A timed run lasts its duration even when the host went quiet before the end, but a
    // run that spent its byte budget ends with its last IO: its rates are per true duration.
    let mut fin = at.last_host;
    if timed && fin < at.end {
        dev.idle_until(at.now.min(at.end), at.end);
        fin = at.end;
    }
    // The run also lasts until the device's own work for it is done (an HDD destaging what
    // the run left in its write cache; the next run starts with the cache empty): a write
    // cache lends a run the time it takes to write the cache out, and a run's rates would
    // otherwise exceed what the media can sustain.
    fin = fin.max(at.last_own);
    dev.set_clock(fin.max(at.now));
    res.end_ns = fin.max(at.start + 1);
    // The series covers the whole runtime, quiet seconds at its end included; its last
    // second is partial when the runtime is not a whole number of seconds.
    let secs = second_of(res.end_ns - at.start) + 1;
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

    #[test]
    fn paths_keep_their_outstanding_io_and_share_a_rate() {
        let mut dev = Counter {
            now: 0,
            pending: vec![],
            offsets: vec![],
        };
        let mut spec = RunSpec::single(true, false, 4096, 6);
        spec.duration_ns = Some(NS / 10);
        let res = run_paths(&mut dev, &spec, &[2, 4], &mut |_, _| true).unwrap();
        let ios: Vec<u64> = res.paths.iter().map(|p| p.read.ios).collect();
        assert_eq!(ios.iter().sum::<u64>(), res.read.ios);
        // closed loop at a fixed latency: each path's IOs follow its outstanding IO
        assert!(
            (ios[1] as f64 / ios[0] as f64 - 2.0).abs() < 0.01,
            "{ios:?}"
        );
        // open loop: the arrivals are shared, not all given to the slot freed last
        spec.rate_iops = Some(10_000.0);
        let res = run_paths(&mut dev, &spec, &[3, 3], &mut |_, _| true).unwrap();
        let ios: Vec<u64> = res.paths.iter().map(|p| p.read.ios).collect();
        assert!(ios[0].abs_diff(ios[1]) <= 1 && ios[0] > 400, "{ios:?}");
        assert!(run_paths(&mut dev, &spec, &[3, 2], &mut |_, _| true).is_err());
        assert!(run_paths(&mut dev, &spec, &[6, 0], &mut |_, _| true).is_err());
    }
}
