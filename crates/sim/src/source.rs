//! Where the driver's IOs come from: a mix of streams (random or sequential, each with its
//! share, generated a few ahead so their map entries can be prefetched) or a trace.

use crate::rng::Rng;
use crate::workload::{Device, RunSpec, StreamSpec, Trace, NS};

/// Where IOs come from.
pub(crate) trait Source {
    /// Earliest time the next IO may be issued, given the current time; None when exhausted.
    fn peek(&mut self, now: u64) -> Option<u64>;
    /// The next IO (write?, offset, length), issued at `now`.
    fn take<D: Device>(&mut self, now: u64, dev: &D) -> (bool, u64, u64);
}

/// IOs are generated this many ahead of issue so their map entries can be prefetched (and
/// the valid bits of their old locations half as many ahead): 8 and 4 were too close for
/// the map entry to arrive when the many GC copies of a write come between (the generated
/// sequence is the same, only the look-ahead is longer).
const LOOK: usize = 16;

pub(crate) struct StreamSource {
    cum: Vec<f64>,
    streams: Vec<StreamSpec>,
    blocks: Vec<u64>, // addressable blocks of each stream's size in the active range
    cursor: Vec<u64>,
    rng: Rng,
    zones: Vec<(f64, u64, u64)>, // (cumulative IO share, first byte, end byte) of each zone
    interval: Option<f64>,
    next: f64,
    ahead: [(bool, u64, u64); LOOK],
    head: usize,
}

impl StreamSource {
    #[inline(always)]
    fn generate(&mut self) -> (bool, u64, u64) {
        let i = if self.streams.len() == 1 {
            0
        } else {
            let r = self.rng.unit();
            self.cum
                .iter()
                .position(|&c| r < c)
                .unwrap_or(self.streams.len() - 1)
        };
        let s = &self.streams[i];
        let off = if s.rnd && !self.zones.is_empty() {
            let r = self.rng.unit();
            let &(_, lo, hi) = self
                .zones
                .iter()
                .find(|z| r < z.0)
                .unwrap_or(self.zones.last().unwrap());
            let first = lo.div_ceil(s.bs);
            let n = (hi / s.bs).saturating_sub(first).max(1);
            (first + self.rng.below(n)).min(self.blocks[i] - 1) * s.bs
        } else if s.rnd {
            self.rng.below(self.blocks[i]) * s.bs
        } else {
            let o = self.cursor[i];
            self.cursor[i] = if o / s.bs + 1 >= self.blocks[i] {
                0
            } else {
                o + s.bs
            };
            o
        };
        (s.write, off, s.bs)
    }
}

impl StreamSource {
    /// When an open loop's next IO is due. Out of line: inlined, the compiler worked it out
    /// (a float conversion and compares) for every closed-loop IO too, and threw it away.
    #[inline(never)]
    fn paced(&self, now: u64) -> u64 {
        (self.next as u64).max(now)
    }
}

impl Source for StreamSource {
    #[inline(always)]
    fn peek(&mut self, now: u64) -> Option<u64> {
        Some(match self.interval {
            None => now,
            Some(_) => self.paced(now),
        })
    }

    #[inline(always)]
    fn take<D: Device>(&mut self, now: u64, dev: &D) -> (bool, u64, u64) {
        let io = self.ahead[self.head];
        let new = self.generate();
        dev.prefetch(new.1, 0);
        self.ahead[self.head] = new;
        self.head = (self.head + 1) % LOOK;
        dev.prefetch(self.ahead[(self.head + LOOK / 2) % LOOK].1, 1);
        if let Some(iv) = self.interval {
            self.next = (self.next + iv).max(now as f64);
        }
        io
    }
}

pub(crate) struct TraceSource<'a> {
    trace: &'a Trace,
    start: u64,
    i: usize,
}

impl Source for TraceSource<'_> {
    fn peek(&mut self, now: u64) -> Option<u64> {
        (self.i < self.trace.times_ns.len())
            .then(|| (self.start + self.trace.times_ns[self.i]).max(now))
    }
    fn take<D: Device>(&mut self, _now: u64, _dev: &D) -> (bool, u64, u64) {
        let i = self.i;
        self.i += 1;
        (self.trace.write[i], self.trace.off[i], self.trace.len[i])
    }
}

impl StreamSource {
    /// The spec's streams over its active range (and skew zones), paced from `start` when
    /// the spec gives a rate.
    pub(crate) fn new(spec: &RunSpec, capacity: u64, start: u64) -> StreamSource {
        let range = (capacity as f64 * spec.active_range) as u64;
        let total: f64 = spec.streams.iter().map(|s| s.share).sum();
        let mut acc = 0.0;
        let cum = spec
            .streams
            .iter()
            .map(|s| {
                acc += s.share / total;
                acc
            })
            .collect();
        let (mut io, mut at) = (0.0, 0.0);
        let zones = spec
            .zones
            .iter()
            .map(|&(share, span)| {
                let lo = (range as f64 * at) as u64;
                io += share;
                at += span;
                (io, lo, ((range as f64 * at) as u64).min(range))
            })
            .collect();
        let mut src = StreamSource {
            zones,
            cum,
            streams: spec.streams.clone(),
            blocks: spec.streams.iter().map(|s| range / s.bs).collect(),
            cursor: vec![0; spec.streams.len()],
            rng: Rng::new(spec.seed),
            interval: spec.rate_iops.map(|r| NS as f64 / r),
            next: start as f64,
            ahead: [(false, 0, 0); LOOK],
            head: 0,
        };
        for i in 0..LOOK {
            src.ahead[i] = src.generate();
        }
        src
    }
}

impl<'a> TraceSource<'a> {
    pub(crate) fn new(trace: &'a Trace, start: u64) -> TraceSource<'a> {
        TraceSource { trace, start, i: 0 }
    }
}
