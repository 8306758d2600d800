//! The HDD: one actuator over zoned platters spinning at `rpm`.
//!
//! Geometry: LBA 0 is at the outer edge; with constant linear density the LBA fraction f
//! lies at radius r = sqrt(1 − f(1 − ri²)) (ri = inner/outer radius = inner/outer media
//! rate), and the media rate is outer·r. The head position is the radial fraction
//! x = (1 − r)/(1 − ri). A sector's angle is the fractional number of tracks from LBA 0,
//! Θ(f) = C/(outer·rev) · 2(1 − r)/(1 − ri²), so a transfer of n bytes turns the platter by
//! exactly n/track-bytes and sequential IO continues without a rotational miss.
//!
//! Seek time: track-to-track + A·√d for distances d up to the knee, then linear with the
//! same slope at the knee, reaching full-stroke at d = 1 (Ruemmler & Wilkes' shape).
//! Command queuing picks, among the first `ncq` queued commands, the one with the shortest
//! positioning time (seek + rotational wait), so random IOPS grow with queue depth; a host
//! command's wait, weighted by `age_weight`, counts off its positioning time (command aging),
//! which bounds the wait of one the head keeps passing over.
//!
//! Every command costs `overhead` and every byte crosses the media at the zone's rate. A
//! read that continues the previous transfer finds the head in place: the drive has read
//! ahead while the command's overhead ran, so sequential reads stream at the media rate
//! unless the overhead is the longer (small blocks). A write with
//! the write cache disabled is written from the host's data after its overhead: by then the
//! platter has turned past the next sector, so even a contiguous write waits for it to come
//! round again (one write per revolution at queue depth 1; queued writes further along the
//! track fill the rest of the turn). With the write cache enabled, a write is acknowledged
//! once its data is in the cache (link transfer + the controller's time for the command,
//! which varies by `time_spread`) and destaged in the background; contiguous cached data
//! streams to the media without missing a turn. The one controller also starts each destage
//! that needs a seek (it chooses it and sets up the seek and the transfer, for a command
//! overhead), so a write arriving then waits for it: the occasional slower acknowledgement
//! of a drive that is destaging. When the cache holds
//! no room for a write it waits for a destage to make room (writes are taken in arrival
//! order); only a write larger than the whole cache goes through to the media as with the
//! cache disabled. Destages queue apart from host commands and command queuing chooses
//! among the first `ncq` of each, so a full cache's backlog does not hold a host command
//! until it has all been written.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::config::HddConfig;
use crate::driver::{Device, INTERNAL};
use crate::rng::Rng;

/// The controller's timing draws, mixed with the run's seed.
const RNG_SEED: u64 = 0x00DD_CAC4;

struct Req {
    /// Host id, or INTERNAL for the destage of a cached write.
    id: u32,
    write: bool,
    off: u64,
    len: u64,
    /// When the command (or, for a destage, its data) reached the drive.
    at: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Media transfer continues where the last one ended.
    Continue,
    /// Served from the read cache.
    CacheHit,
    /// Seek and rotational wait.
    Position,
}

pub struct Hdd {
    pub cfg: HddConfig,
    rev_ns: f64,
    ri: f64,
    k: f64,
    a_sqrt: f64,
    b_lin: f64,
    theta_scale: f64,
    /// Radial width of one track (a head move within it is no seek).
    track_x: f64,
    head_x: f64,
    last_end: u64,
    /// Host commands and destages, each in arrival order.
    queue: Vec<Req>,
    destages: Vec<Req>,
    /// Writes waiting for room in the write cache: (arrival, offset, bytes, id).
    waiting: VecDeque<(u64, u64, u64, u32)>,
    /// (done, id, bytes) of the command on the media.
    in_service: Option<(u64, u32, u64)>,
    /// Host completions of writes acknowledged from the write cache.
    acks: BinaryHeap<Reverse<(u64, u32)>>,
    ctrl_busy: u64,
    rng: Rng,
    dirty: u64,
    /// Volatile write cache enabled (acknowledge on arrival in the cache).
    pub write_cache: bool,
    cache: Vec<u64>,
    pub now: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub cache_hits: u64,
    pub seeks: u64,
}

impl Hdd {
    pub fn new(cfg: HddConfig) -> Hdd {
        let rev_ns = 60e9 / cfg.rpm;
        let ri = cfg.inner_mbps / cfg.outer_mbps;
        let k = 1.0 - ri * ri;
        let kn = cfg.seek_knee;
        let a =
            (cfg.full_seek_ns - cfg.track_seek_ns) / (kn.sqrt() + (1.0 - kn) / (2.0 * kn.sqrt()));
        let theta_scale = if k > 0.0 {
            cfg.capacity as f64 / (cfg.outer_mbps * 1e6 * rev_ns / 1e9) * 2.0 / k
        } else {
            0.0
        };
        let tracks = if k > 0.0 {
            theta_scale * (1.0 - ri)
        } else {
            cfg.capacity as f64 / (cfg.outer_mbps * 1e6 * rev_ns / 1e9)
        };
        Hdd {
            track_x: 1.0 / tracks.max(1.0),
            rev_ns,
            ri,
            k,
            a_sqrt: a,
            b_lin: a / (2.0 * kn.sqrt()),
            theta_scale,
            head_x: 0.0,
            last_end: u64::MAX,
            queue: Vec::new(),
            destages: Vec::new(),
            waiting: VecDeque::new(),
            in_service: None,
            acks: BinaryHeap::new(),
            ctrl_busy: 0,
            rng: Rng::new(RNG_SEED),
            dirty: 0,
            write_cache: true,
            cache: vec![u64::MAX; cfg.cache_units.max(1) as usize],
            now: 0,
            read_bytes: 0,
            write_bytes: 0,
            cache_hits: 0,
            seeks: 0,
            cfg,
        }
    }

    fn radius(&self, off: u64) -> f64 {
        let f = off as f64 / self.cfg.capacity as f64;
        (1.0 - f * self.k).max(self.ri * self.ri).sqrt()
    }

    /// Radial head position (0 = outer edge, 1 = inner edge) of a byte offset.
    pub fn x_of(&self, off: u64) -> f64 {
        if self.ri >= 1.0 {
            return off as f64 / self.cfg.capacity as f64;
        }
        (1.0 - self.radius(off)) / (1.0 - self.ri)
    }

    /// Media transfer time of `len` bytes starting at `off`.
    pub fn xfer_ns(&self, off: u64, len: u64) -> f64 {
        len as f64 * 1000.0 / (self.cfg.outer_mbps * self.radius(off))
    }

    fn angle(&self, off: u64) -> f64 {
        let theta = if self.k > 0.0 {
            self.theta_scale * (1.0 - self.radius(off))
        } else {
            off as f64 / (self.cfg.outer_mbps * 1e6 * self.rev_ns / 1e9)
        };
        theta.fract()
    }

    /// Seek time over a radial distance d in [0, 1].
    pub fn seek_ns(&self, d: f64) -> f64 {
        if d < self.track_x {
            return 0.0;
        }
        let kn = self.cfg.seek_knee;
        if d <= kn {
            self.cfg.track_seek_ns + self.a_sqrt * d.sqrt()
        } else {
            self.cfg.track_seek_ns + self.a_sqrt * kn.sqrt() + self.b_lin * (d - kn)
        }
    }

    pub fn rev_ns(&self) -> f64 {
        self.rev_ns
    }

    /// Mean seek between two uniformly random offsets in the first `range` bytes
    /// (midpoint rule on a grid: the analytic figure the validation test compares to).
    pub fn mean_seek_ns(&self, range: u64, grid: usize) -> f64 {
        let xs: Vec<f64> = (0..grid)
            .map(|i| self.x_of(((i as f64 + 0.5) / grid as f64 * range as f64) as u64))
            .collect();
        let mut s = 0.0;
        for &a in &xs {
            for &b in &xs {
                s += self.seek_ns((a - b).abs());
            }
        }
        s / (grid * grid) as f64
    }

    pub fn state(&self) -> Vec<u64> {
        let mut v = vec![
            self.now,
            self.head_x.to_bits(),
            self.last_end,
            self.read_bytes,
            self.write_bytes,
            self.cache_hits,
            self.seeks,
        ];
        v.extend_from_slice(&self.cache);
        v
    }

    pub fn set_state(&mut self, s: &[u64]) {
        self.now = s[0];
        self.head_x = f64::from_bits(s[1]);
        self.last_end = s[2];
        self.read_bytes = s[3];
        self.write_bytes = s[4];
        self.cache_hits = s[5];
        self.seeks = s[6];
        self.cache.copy_from_slice(&s[7..]);
    }

    fn cached(&self, off: u64, len: u64) -> bool {
        let n = self.cache.len() as u64;
        (off / 4096..(off + len).div_ceil(4096)).all(|p| self.cache[(p % n) as usize] == p)
    }

    fn remember(&mut self, off: u64, len: u64) {
        let n = self.cache.len() as u64;
        for p in off / 4096..(off + len).div_ceil(4096) {
            self.cache[(p % n) as usize] = p;
        }
    }

    /// When the media transfer of `r` can start if the head is free from `t`, and how.
    fn plan(&self, r: &Req, t: f64) -> (f64, Access) {
        let destage = r.id == INTERNAL;
        let ready = t.max(r.at as f64);
        if r.off == self.last_end && !r.write {
            // The media has read ahead since the last transfer ended; the command's own
            // overhead still bounds its completion (see start_next).
            return (t, Access::Continue);
        }
        if r.off == self.last_end && destage {
            return (ready, Access::Continue);
        }
        if !r.write && self.cfg.cache_units > 0 && self.cached(r.off, r.len) {
            return (ready + self.cfg.overhead_ns as f64, Access::CacheHit);
        }
        // A destage's command overhead was paid when the host's write was accepted.
        let ovh = if destage {
            0.0
        } else {
            self.cfg.overhead_ns as f64
        };
        let arrive = ready + ovh + self.seek_ns((self.x_of(r.off) - self.head_x).abs());
        let wait = (self.angle(r.off) - arrive / self.rev_ns).rem_euclid(1.0) * self.rev_ns;
        (arrive + wait, Access::Position)
    }

    fn start_next(&mut self, t: u64) {
        let ncq = self.cfg.ncq as usize;
        let tf = t as f64;
        let mut best = (f64::MAX, 0usize, Access::Position, false);
        // Command aging (aged shortest positioning time first, Jacobson & Wilkes 1991): the
        // time a host command has waited, weighted, is taken off its positioning time.
        // Without it a command the head keeps passing over waits until the queue empties,
        // to the end of a run: without write caching, the first of a queued sequential
        // stream (the head moves on past it, each later command is reached sooner).
        let w = self.cfg.age_weight;
        let mut key = f64::MAX;
        for (d, q) in [(false, &self.queue), (true, &self.destages)] {
            for (i, r) in q.iter().take(ncq).enumerate() {
                let (start, how) = self.plan(r, tf);
                let k = if d {
                    start
                } else {
                    start - w * (tf - r.at as f64)
                };
                if k < key {
                    key = k;
                    best = (start, i, how, d);
                }
            }
        }
        if best.0 == f64::MAX {
            return;
        }
        let r = if best.3 {
            self.destages.remove(best.1)
        } else {
            self.queue.remove(best.1)
        };
        if best.3 && best.2 == Access::Position {
            self.ctrl_busy = self.ctrl_busy.max(t) + self.ctrl_ns();
        }
        let done = match best.2 {
            Access::CacheHit => {
                self.cache_hits += 1;
                best.0 + r.len as f64 * 1000.0 / self.cfg.link_mbps
            }
            Access::Continue if !r.write => {
                (best.0 + self.xfer_ns(r.off, r.len)).max((r.at + self.cfg.overhead_ns) as f64)
            }
            Access::Continue => best.0 + self.xfer_ns(r.off, r.len),
            Access::Position => {
                self.seeks += 1;
                best.0 + self.xfer_ns(r.off, r.len)
            }
        };
        let done = done.ceil() as u64;
        if r.write {
            self.write_bytes += r.len;
        } else {
            self.read_bytes += r.len;
        }
        if best.2 != Access::CacheHit {
            self.head_x = self.x_of(r.off + r.len - 1);
            self.last_end = r.off + r.len;
        }
        if self.cfg.cache_units > 0 {
            self.remember(r.off, r.len);
        }
        self.in_service = Some((done.max(t), r.id, r.len));
    }

    /// Accept a write into the write cache: at once if it has room (and no earlier write is
    /// waiting), later if it will once destages make room; returns false when the write must
    /// go to the media itself (cache disabled, or the write is larger than the cache).
    fn cache_write(&mut self, now: u64, off: u64, len: u64, id: u32) -> bool {
        let room = self.cache_bytes();
        if !self.write_cache || len > room {
            return false;
        }
        if !self.waiting.is_empty() || self.dirty + len > room {
            self.waiting.push_back((now, off, len, id));
            return true;
        }
        self.admit(now, off, len, id);
        true
    }

    fn cache_bytes(&self) -> u64 {
        self.cfg.cache_units as u64 * 4096
    }

    /// The controller's time for one command: the overhead, varied (triangular).
    fn ctrl_ns(&mut self) -> u64 {
        let r = self.rng.next_u64();
        let tri = ((r & 0xFFFF_FFFF) as f64 - (r >> 32) as f64) / 4_294_967_296.0;
        (self.cfg.overhead_ns as f64 * (1.0 + self.cfg.time_spread * tri)).round() as u64
    }

    fn admit(&mut self, now: u64, off: u64, len: u64, id: u32) {
        let t = self.ctrl_busy.max(now)
            + self.ctrl_ns()
            + (len as f64 * 1000.0 / self.cfg.link_mbps).ceil() as u64;
        self.ctrl_busy = t;
        self.dirty += len;
        self.acks.push(Reverse((t, id)));
        self.destages.push(Req {
            id: INTERNAL,
            write: true,
            off,
            len,
            at: t,
        });
    }

    /// Writes waiting for room enter the cache once a destage at `t` has made it.
    fn admit_waiting(&mut self, t: u64) {
        let room = self.cache_bytes();
        while let Some(&(at, off, len, id)) = self.waiting.front() {
            if self.dirty + len > room {
                break;
            }
            self.waiting.pop_front();
            self.admit(t.max(at), off, len, id);
        }
    }
}

impl Device for Hdd {
    fn clock(&self) -> u64 {
        self.now
    }
    fn set_clock(&mut self, t: u64) {
        self.now = t;
    }
    fn capacity(&self) -> u64 {
        self.cfg.capacity
    }
    fn set_entropy(&mut self, _e: f64) {}

    fn submit(&mut self, now: u64, write: bool, off: u64, len: u64, id: u32) {
        if !(write && self.cache_write(now, off, len, id)) {
            self.queue.push(Req {
                id,
                write,
                off,
                len,
                at: now,
            });
        }
        if self.in_service.is_none() {
            self.start_next(now);
        }
    }

    fn next_completion(&self) -> Option<u64> {
        let ack = self.acks.peek().map(|r| r.0 .0);
        match (ack, self.in_service) {
            (Some(a), Some(s)) => Some(a.min(s.0)),
            (a, s) => a.or(s.map(|s| s.0)),
        }
    }

    fn pop_completion(&mut self) -> (u64, u32) {
        if let Some(&Reverse((a, id))) = self.acks.peek() {
            if self.in_service.is_none_or(|s| a <= s.0) {
                self.acks.pop();
                return (a, id);
            }
        }
        let (t, id, len) = self.in_service.take().expect("an IO in service");
        if id == INTERNAL {
            self.dirty -= len;
            self.admit_waiting(t);
        }
        self.start_next(t);
        (t, id)
    }

    fn seed(&mut self, seed: u64) {
        // As the SSD's: a round's timing does not depend on the draws of earlier rounds.
        self.rng = Rng::new(RNG_SEED ^ seed.rotate_left(29));
    }

    fn idle_until(&mut self, _since: u64, _until: u64) {}
}
