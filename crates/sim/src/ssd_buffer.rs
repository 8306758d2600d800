//! The SSD's write buffer: when a unit gets a slot, how it enters, and when it is safe on
//! flash. Apart from ssd.rs to keep that file to the command paths; inlined into them all the
//! same (one codegen unit).

use super::*;

impl Ssd {
    /// When a unit ready at `ready` enters the write buffer: no earlier than pacing allows,
    /// and once a unit has left it if it is full. Units whose program is done by then leave;
    /// true with it when the last of them is still at the heap's top, for `buffer_enter` to
    /// replace (one sift instead of a pop and a push: this runs for every unit written).
    #[inline(always)]
    pub(super) fn buffer_slot(&mut self, ready: u64) -> (u64, bool) {
        let mut ready = ready.max(self.pace_next);
        while let Some(t) = self.buf.peek() {
            let n = self.buf.len();
            if t > ready && n < self.nbuf {
                break;
            }
            ready = ready.max(t);
            let next = self.buf.second().unwrap_or(u64::MAX);
            if next > ready && n - 1 < self.nbuf {
                return (ready, true); // the loop would stop after this one
            }
            self.buf.pop();
        }
        (ready, false)
    }

    /// The unit whose program starts at `start` enters the buffer, in the place of the one
    /// `buffer_slot` left at the top (`owed`).
    #[inline(always)]
    pub(super) fn buffer_enter(&mut self, start: u64, owed: bool) {
        if owed {
            self.buf.replace_least(start);
        } else {
            self.buf.push(start);
        }
    }

    /// When a unit whose program started at `start` (its die free, its data across the
    /// channel) is safe on flash: the page program (charged to the die per chunk,
    /// `programmed`) takes a whole program time, varied as every NAND operation is.
    pub(super) fn durable(&mut self, lpn: u32, start: u64, programmed: u64) -> u64 {
        let block = self.ftl.l2p[lpn as usize] as u64 / self.cfg.cpb as u64;
        let t_prog = if block >= self.cfg.n_main() as u64 {
            self.cfg.slc_t_prog_ns
        } else {
            self.cfg.t_prog_ns
        };
        programmed.max(start + self.flash.vary(t_prog))
    }
}
