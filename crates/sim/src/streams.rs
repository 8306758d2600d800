//! The per-IO walks of `iolab trace analyze` (src/iolab/traces/analysis/streams.py has the
//! method): the SEQ rule, the in-flight count and the per-step tabulation, done in one pass
//! over each chunk of IOs in issue order, with their state carried to the next chunk.
//!
//! Every figure is the one the earlier numpy passes gave, to the bit: integer counts are
//! exact, in-flight times are whole nanoseconds summed exactly (numpy summed them as doubles,
//! exact below 2^53 ns = 104 days of in-flight time per step), and each (step, stream)
//! latency sum adds a chunk's latencies in row order from 0.0, as numpy's bincount did.

pub use crate::streams_tab::MAX_BINS;

/// IOs per slice of a run: ~270 KB of columns, which the passes over it find in the cache.
const SLICE: usize = 8192;
use crate::streams_cols::StepOf;
pub use crate::streams_cols::{Chunk, Row, Rule, Tab};
use crate::streams_oio::Completions;
use crate::streams_seq::{has_avx2, seq_flags, Seq};
use crate::streams_tab::Tabulator;

fn grow<T: Clone + Default>(v: &mut Vec<T>, len: usize) {
    if v.len() < len {
        v.resize(len, T::default());
    }
}

/// The running state of the analysis across chunks.
pub struct Walk {
    rule: Rule,
    avx2: bool,
    seq: Seq,
    /// Completions seen, counted by time.
    pending: Completions,
    issued: i64,
    next_bound: i64,
    /// Per step: in-flight ns of the parts of IOs inside it, and the count of IOs spanning
    /// it whole, as differences (+1 at the first such step, -1 past the last).
    inflight_ns: Vec<i128>,
    spanning: Vec<i64>,
    oio_max: Vec<i64>,
    last_comp: i64,
    pub missing_latency: i64,
    /// IOs walked, and the last one's issue time.
    pub ios: i64,
    pub last_issue_ns: i64,
    /// The current chunk's SEQ flags and tabulation.
    flags: Vec<bool>,
    /// The current slice's completion times (`completions`).
    comps: Vec<i64>,
    tab: Tabulator,
}

impl Walk {
    pub fn new(rule: Rule) -> Result<Walk, String> {
        if rule.step_ns <= 0 || rule.lookback == 0 || rule.max_steps <= 0 {
            return Err(format!(
                "stream walk: step {} ns, lookback {} and max_steps {} must be > 0",
                rule.step_ns, rule.lookback, rule.max_steps
            ));
        }
        Ok(Walk {
            rule,
            avx2: has_avx2(),
            seq: Seq::default(),
            pending: Completions::new(),
            issued: 0,
            next_bound: 0,
            inflight_ns: Vec::new(),
            spanning: Vec::new(),
            oio_max: Vec::new(),
            last_comp: i64::MIN,
            missing_latency: 0,
            ios: 0,
            last_issue_ns: 0,
            flags: Vec::new(),
            comps: Vec::new(),
            tab: Tabulator::new(rule.step_ns),
        })
    }

    /// The latest completion seen, if any IO had a response time.
    pub fn last_completion_ns(&self) -> Option<i64> {
        (self.last_comp != i64::MIN).then_some(self.last_comp)
    }

    /// Walk one chunk: SEQ flags, the in-flight count, and the tabulation.
    pub fn add(&mut self, c: &Chunk) -> Result<Tab, String> {
        self.feed(c)?;
        Ok(self.end_chunk())
    }

    /// Walk a run of the current chunk's rows (the chunk may come in several runs), in
    /// slices that stay in the CPU cache from one pass to the next.
    /// Each slice is checked before it is walked, while it is in the cache: a slice with an
    /// IO the walk cannot take stops the walk there, before its tables grow for it.
    pub fn feed(&mut self, c: &Chunk) -> Result<(), String> {
        check_lengths(c)?;
        let n = c.time_ns.len();
        for lo in (0..n).step_by(SLICE) {
            let r = lo..(lo + SLICE).min(n);
            let slice = Chunk {
                time_ns: &c.time_ns[r.clone()],
                write: &c.write[r.clone()],
                offset: &c.offset[r.clone()],
                size: &c.size[r.clone()],
                lat: &c.lat[r.clone()],
                dev: c.dev.map(|d| &d[r]),
            };
            check(&slice)?;
            self.check_order(&slice)?;
            self.check_steps(&slice)?;
            self.feed_slice(&slice);
        }
        Ok(())
    }

    fn feed_slice(&mut self, c: &Chunk) {
        let Some(&last) = c.time_ns.last() else {
            return;
        };
        let mut flags = std::mem::take(&mut self.flags);
        let start = flags.len();
        self.seq_flags(c, &mut flags);
        if self.rule.has_latency {
            self.outstanding(c.time_ns, c.lat);
        }
        self.tab.feed(c, &flags[start..]);
        self.flags = flags;
        self.ios += c.time_ns.len() as i64;
        self.last_issue_ns = self.last_issue_ns.max(last);
    }

    /// End the current chunk: its rows, or its SEQ flags when it has too many (step, seq,
    /// write, size) slots for the dense table the rows follow (the caller groups it then).
    pub fn end_chunk(&mut self) -> Tab {
        let flags = std::mem::take(&mut self.flags);
        self.tab.finish(flags)
    }

    fn seq_flags(&mut self, c: &Chunk, flags: &mut Vec<bool>) {
        let (lb, gap) = (self.rule.lookback, self.rule.gap_bytes);
        seq_flags(&mut self.seq, c, lb, gap, self.avx2, flags);
    }

    /// The in-flight count over IOs with a response time: each run of IOs issued at one
    /// instant is taken whole, its completions first (an IO completing at the instant it is
    /// issued counts as done there, as does one completing exactly at a step's start).
    ///
    /// The completion times, the IOs without one, the latest and the in-flight time are
    /// found first, in loops the compiler vectorises; what is left per IO is the count.
    fn outstanding(&mut self, t: &[i64], lat: &[f64]) {
        let (Some(&first), Some(&last)) = (t.first(), t.last()) else {
            return;
        };
        let mut comps = std::mem::take(&mut self.comps);
        completions(t, lat, &mut comps);
        self.missing_latency += comps.iter().filter(|&&c| c < 0).count() as i64;
        let latest = comps.iter().copied().max().unwrap_or(NONE);
        if latest != NONE {
            self.last_comp = self.last_comp.max(latest); // a run without response times has none
        }
        self.inflight_of(t, &comps, latest);
        self.pending.start(first, (last - first) / t.len() as i64);
        let mut step_of = StepOf::new(self.rule.step_ns);
        let mut i = 0;
        while i < t.len() {
            let t0 = t[i];
            let s = step_of.get(t0);
            let mut run = 0;
            while i < t.len() && t[i] == t0 {
                if comps[i] >= 0 {
                    self.pending.push(comps[i]);
                    run += 1;
                }
                i += 1;
            }
            if run == 0 {
                continue;
            }
            while self.next_bound <= s {
                self.level_at_bound();
            }
            self.issued += run;
            // The level is at most issued - done_before; only when that could raise the
            // step's peak is the exact count needed.
            self.pending.advance(t0);
            let k = s as usize;
            if k < self.oio_max.len() && self.issued - self.pending.done_before <= self.oio_max[k] {
                continue;
            }
            let level = self.issued - self.pending.done_by(t0);
            self.raise(s, level);
        }
        self.comps = comps;
    }

    /// The in-flight time of a run of IOs, per step; `latest` its latest completion (or
    /// NONE). A run inside one step whose IOs all complete in it (nearly every run) adds in
    /// one sum: the run is in time order (`check_order`), so its ends bound it.
    fn inflight_of(&mut self, t: &[i64], comps: &[i64], latest: i64) {
        let step_ns = self.rule.step_ns;
        let s = t[0].div_euclid(step_ns);
        let end_s = (s + 1) * step_ns;
        if t[t.len() - 1] < end_s && latest < end_s {
            let k = s as usize;
            grow(&mut self.inflight_ns, k + 1);
            // i128, as the per-step sums: a slice of IOs each in flight up to a long step
            // can pass i64
            let sum: i128 = t
                .iter()
                .zip(comps)
                .map(|(&t0, &c)| if c >= 0 { (c - t0) as i128 } else { 0 })
                .sum();
            self.inflight_ns[k] += sum;
            return;
        }
        let mut step_of = StepOf::new(step_ns);
        for (&t0, &c) in t.iter().zip(comps) {
            if c >= 0 {
                self.inflight(t0, c, step_of.get(t0));
            }
        }
    }

    /// The level at the start of step `next_bound` (IOs carried over from before it).
    fn level_at_bound(&mut self) {
        let k = self.next_bound;
        let level = self.issued - self.pending.done_by(k * self.rule.step_ns);
        self.raise(k, level);
        self.next_bound += 1;
    }

    fn raise(&mut self, step: i64, level: i64) {
        let k = step as usize;
        grow(&mut self.oio_max, k + 1);
        self.oio_max[k] = self.oio_max[k].max(level);
    }

    /// Split [t, comp) over the steps it spans.
    #[inline(always)]
    fn inflight(&mut self, t: i64, comp: i64, s: i64) {
        let step_ns = self.rule.step_ns;
        let end_s = (s + 1) * step_ns;
        let k = s as usize;
        if comp < end_s {
            grow(&mut self.inflight_ns, k + 1);
            self.inflight_ns[k] += (comp - t) as i128;
            return;
        }
        let b = comp.div_euclid(step_ns);
        let kb = b as usize;
        grow(&mut self.inflight_ns, kb + 1);
        self.inflight_ns[k] += (end_s - t) as i128;
        self.inflight_ns[kb] += (comp - b * step_ns) as i128;
        if b > s + 1 {
            grow(&mut self.spanning, kb + 1);
            self.spanning[k + 1] += 1;
            self.spanning[kb] -= 1;
        }
    }

    /// Issue times must not go back: every pass of the walk (the step of an IO, the histories
    /// of SEQ detection, the pending completions) takes the rows in time order, and a table whose
    /// rows are not (a Parquet file edited or written by another tool) indexed a step far
    /// past its tables and panicked. Checked across chunks from the last IO walked.
    fn check_order(&self, c: &Chunk) -> Result<(), String> {
        let mut last = if self.ios > 0 {
            self.last_issue_ns
        } else {
            i64::MIN
        };
        if let Some(k) = c.time_ns.iter().position(|&t| {
            let back = t < last;
            last = t;
            back
        }) {
            let before = if k > 0 {
                c.time_ns[k - 1]
            } else {
                self.last_issue_ns
            };
            return Err(format!(
                "stream walk: IO {} is issued at {} ns, before the IO ahead of it ({} ns): the table's rows are not in time order, as iolab's import and capture write them: import the trace again",
                self.ios + k as i64 + 1,
                c.time_ns[k],
                before
            ));
        }
        Ok(())
    }

    /// Refuse a run whose issues or completions reach past `max_steps` steps, before the
    /// per-step tables grow to them. A latency that is not a number counts as none (as in
    /// the walk); one too large for the clock is refused.
    fn check_steps(&self, c: &Chunk) -> Result<(), String> {
        let (step, max) = (self.rule.step_ns, self.rule.max_steps);
        // 2^62 ns is 146 years: past any table's times, and far from overflowing the walk's
        // integer sum of issue time and response time
        const CLOCK: i64 = 1 << 62;
        let mut last = c.time_ns.iter().copied().max().unwrap_or(0);
        if self.rule.has_latency {
            // one branch-free pass the compiler vectorises (a latency that is not a number, or
            // negative, is none; `as` saturates, so a huge one reads as past the clock), then
            // the IO to blame is looked for only when there is one
            let ends = c.time_ns.iter().zip(c.lat).map(|(&t, &l)| {
                let comp = (t as f64 + l * 1000.0 + 0.5) as i64;
                if l >= 0.0 {
                    comp
                } else {
                    0
                }
            });
            let latest = ends.fold(0i64, i64::max);
            if latest >= CLOCK {
                let (t, l) = c
                    .time_ns
                    .iter()
                    .zip(c.lat)
                    .find(|&(&t, &l)| l >= 0.0 && t as f64 + l * 1000.0 + 0.5 >= CLOCK as f64)
                    .map_or((0, 0.0), |(&t, &l)| (t, l));
                return Err(format!(
                    "stream walk: an IO issued at {t} ns has a response time of {l} µs, past the clock's range"
                ));
            }
            last = last.max(latest);
        }
        if last.div_euclid(step) >= max {
            return Err(format!(
                "stream walk: an IO reaches {last} ns, past {max} steps of {step} ns (the limit of steps)"
            ));
        }
        Ok(())
    }

    /// Close the walk at `n_steps` steps: the levels at the starts of the steps after the
    /// last issue, then per step the in-flight ns and the maximum in-flight count (as long
    /// as the highest step anything reached, at least `n_steps`).
    pub fn finish(&mut self, n_steps: i64) -> Result<(Vec<f64>, Vec<i64>), String> {
        if n_steps > self.rule.max_steps {
            return Err(format!(
                "stream walk: {n_steps} steps asked, more than the limit of {} steps",
                self.rule.max_steps
            ));
        }
        if self.rule.has_latency {
            while self.next_bound < n_steps {
                self.level_at_bound();
            }
        }
        let len = [
            n_steps.max(0) as usize,
            self.inflight_ns.len(),
            self.oio_max.len(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        grow(&mut self.inflight_ns, len);
        grow(&mut self.spanning, len);
        grow(&mut self.oio_max, len);
        let mut spans = 0i64;
        let step = self.rule.step_ns as i128;
        let inflight = (0..len)
            .map(|k| {
                spans += self.spanning[k];
                (self.inflight_ns[k] + spans as i128 * step) as f64
            })
            .collect();
        Ok((inflight, self.oio_max.clone()))
    }
}

/// No completion time: the IO has no response time.
const NONE: i64 = -1;

/// Each IO's completion time in ns (issue plus the response time, rounded), or NONE. The
/// times are not negative (`check`) and the sums stay under 2^62 (`check_steps`).
fn completions(t: &[i64], lat: &[f64], out: &mut Vec<i64>) {
    out.clear();
    out.extend(t.iter().zip(lat).map(|(&t0, &l)| {
        if l >= 0.0 {
            t0 + (l * 1000.0 + 0.5) as i64
        } else {
            NONE
        }
    }));
}

fn check_lengths(c: &Chunk) -> Result<(), String> {
    let n = c.time_ns.len();
    let lens = [c.write.len(), c.offset.len(), c.size.len(), c.lat.len()];
    if lens.iter().any(|&l| l != n) || c.dev.is_some_and(|d| d.len() != n) {
        return Err(format!(
            "stream walk: columns of unequal lengths ({n}, {lens:?})"
        ));
    }
    Ok(())
}

fn check(c: &Chunk) -> Result<(), String> {
    if c.time_ns.first().is_some_and(|&t| t < 0) || c.dev.is_some_and(|d| d.iter().any(|&v| v < 0))
    {
        return Err("stream walk: negative issue time or device code".into());
    }
    if c.size.iter().any(|&s| s <= 0) {
        return Err("stream walk: IO sizes must be > 0".into());
    }
    Ok(())
}

#[cfg(test)]
#[path = "streams_tests.rs"]
mod tests;
