//! The SSD's write path: data crosses the link, the controller spends `overhead` on the
//! command, each 4 KiB unit waits for a write-buffer slot (ssd_buffer.rs) and goes to the FTL,
//! and the command completes once all its units are in the buffer (acknowledged early) or
//! programmed. Apart from ssd.rs, as the read path is (ssd_read.rs); inlined into `submit` all
//! the same (one codegen unit).

use super::*;

/// A write command's progress through its units.
struct WriteCmd {
    /// When the controller has the command; when its last unit entered the buffer; when it
    /// may complete.
    t0: u64,
    entry: u64,
    done: u64,
    /// The bytes it writes.
    off: u64,
    end: u64,
    /// Whether units are acknowledged once in the buffer (write cache on, or power-loss
    /// protected), not once programmed.
    ack_early: bool,
    /// The page a read-modify-write read last (reads of one page share one array read).
    scratch: u64,
}

impl Ssd {
    /// A write command (`submit`'s, its one caller: inlined there, one call less per write).
    #[inline(always)]
    pub(super) fn write(&mut self, now: u64, off: u64, len: u64) -> u64 {
        self.burst(now);
        let period = self.cfg.gc_pass_period_ns;
        if period > 0 {
            // A periodic GC pass runs by the drive's clock (ftl/pass.rs). The period's start
            // is kept, not found by a 64-bit division for every write; the clock only moves
            // on, and a loaded state or a clock set anew finds it again here.
            if now < self.pass_from || now - self.pass_from >= period {
                self.pass_from = now - now % period;
            }
            self.ftl.pass = now - self.pass_from < self.cfg.gc_pass_ns;
        }
        self.evict_when_idle(now);
        let t_in = self.link(0, now, len);
        let t0 = self.controller(t_in, None, true);
        let (gc0, runs0) = (self.ftl.c.gc_chunks, self.ftl.c.gc_runs);
        let (u0, u1) = (off / UNIT, (off + len - 1) / UNIT);
        let mut w = WriteCmd {
            t0,
            entry: t0,
            done: t0,
            off,
            end: off + len,
            ack_early: self.write_cache || self.cfg.plp,
            scratch: u64::MAX,
        };
        let stream = self.held.write_in_stream(off, off + len);
        if len == UNIT && off.is_multiple_of(UNIT) {
            // One whole unit (a 4 KiB random write, the usual command): nothing to read or
            // merge, no later unit to fetch ahead for, so none of `write_units`' tests.
            self.write_unit(u0 as u32, false, &mut w);
        } else {
            self.write_units(u0, u1, stream, &mut w);
        }
        let hold = self.gc_hold(gc0, runs0);
        if hold > 0 {
            // The slice (and a victim switch) runs after this command: the next ones wait.
            let held = w.entry + hold;
            for b in self.ctrl_busy.iter_mut() {
                *b = (*b).max(held);
            }
        }
        self.host.writes += 1;
        self.host.write_bytes += len;
        w.done
    }

    /// The units `u0..=u1` of a write command other than one whole unit: the first and the
    /// last may be partial (read first, or merged into a unit the buffer holds open).
    #[inline(always)]
    fn write_units(&mut self, u0: u64, u1: u64, stream: bool, w: &mut WriteCmd) {
        // A command of many units overwrites units whose old locations are scattered: the
        // driver's prefetch covers its first unit, so the valid bits of the next ones are
        // fetched here, a few units ahead (their map entries are in order, at hand).
        for u in (u0 + 1)..=u1.min(u0 + UNITS_AHEAD - 1) {
            self.ftl.prefetch(u as u32, 1);
        }
        for u in u0..=u1 {
            if u + UNITS_AHEAD <= u1 {
                self.ftl.prefetch((u + UNITS_AHEAD) as u32, 1);
            }
            let lpn = u as u32;
            let partial = (u == u0 && !w.off.is_multiple_of(UNIT))
                || (u == u1 && !w.end.is_multiple_of(UNIT));
            if partial && self.nbuf > 0 && stream && self.merge_open(lpn, w) {
                continue;
            }
            self.write_unit(lpn, partial, w);
        }
    }

    /// A sequential stream's partial write into a unit the buffer holds open: no read, no
    /// program of its own (held.rs). False when the unit is not open (written as any other).
    #[inline(always)]
    fn merge_open(&mut self, lpn: u32, w: &mut WriteCmd) -> bool {
        let addr = self.ftl.l2p[lpn as usize];
        if let Some(o) = self.held.continue_unit(lpn, addr, w.off, w.end) {
            if w.ack_early {
                return true;
            }
            if w.t0 < o.start {
                w.done = w.done.max(o.durable);
                return true;
            }
        }
        false
    }

    /// One unit of a write command: read first when the write covers part of it, wait for a
    /// buffer slot, hand it to the FTL.
    #[inline(always)]
    fn write_unit(&mut self, lpn: u32, partial: bool, w: &mut WriteCmd) {
        let mut ready = w.t0;
        if partial {
            let old = self.ftl.l2p[lpn as usize];
            if old != NONE {
                let c = self.ftl.len_of(lpn);
                ready = self.flash.read(old as u64, c, w.t0, &mut w.scratch);
                self.ftl.c.rmw_reads += 1;
            }
        }
        let mut owed = false;
        if self.nbuf > 0 {
            (ready, owed) = self.buffer_slot(ready);
        }
        w.entry = w.entry.max(ready);
        let c = self.unit_chunks();
        let (start, programmed) = self.ftl.host_write(lpn, c, w.entry, &mut self.flash);
        if self.nbuf == 0 {
            // Write-through: with no buffer to acknowledge from (whatever the cache
            // setting), the write completes when the page holding its data is programmed,
            // a whole program time after the die starts on it, not after its share of it.
            w.done = w.done.max(self.durable(lpn, start, programmed));
            return;
        }
        self.buffer_enter(start, owed);
        // The buffer's content leaves by `buf_last`: admitting one unit per
        // (buf_last − entry)/pace_units matches the drain when the buffer holds pace_units,
        // admits faster below and slower above. Spacing entries evenly replaces waits for the
        // next slot to free, which are as irregular as the dies' program starts. No pacing
        // (pace_units 0) leaves both alone.
        let last = self.buf_last.max(start);
        if let Some(step) = last.saturating_sub(w.entry).checked_div(self.pace_units) {
            self.buf_last = last;
            self.pace_next = w.entry + step;
        }
        let durable = if w.ack_early {
            0
        } else {
            self.durable(lpn, start, programmed)
        };
        w.done = w.done.max(if w.ack_early { w.entry } else { durable });
        if partial {
            let addr = self.ftl.l2p[lpn as usize];
            self.held.keep_open(Open {
                lpn,
                addr,
                start,
                durable,
                end: w.end,
            });
        }
    }

    /// The controller time that the GC a write ran (from `gc0` chunks copied and `runs0`
    /// victims collected on) holds the cores for. Most writes on most drives owe none, and
    /// the divisions are left out then: the write path is the simulator's hottest.
    #[inline(always)]
    fn gc_hold(&self, gc0: u64, runs0: u64) -> u64 {
        let (c, n) = (&self.cfg, &self.ftl.c);
        if c.gc_copy_ns == 0 && c.gc_switch_ns == 0 || n.gc_chunks == gc0 && n.gc_runs == runs0 {
            return 0;
        }
        // Checkpoints passed; the divisions only when a victim was finished (rarely).
        let switched = if n.gc_runs == runs0 {
            0
        } else {
            n.gc_runs / c.gc_switch_every - runs0 / c.gc_switch_every
        };
        self.unit.quot((n.gc_chunks - gc0) * c.gc_copy_ns) + switched * c.gc_switch_ns
    }
}
