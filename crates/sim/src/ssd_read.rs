//! The SSD's read path: controller, array read on the die (skipped for never-written units,
//! which return zeros, and for a sequential stream's small read of a page the controller holds
//! from a recent command), channel, link. Apart from ssd.rs so that file keeps to the write path.

use super::*;

impl Ssd {
    /// A read command (`submit`'s): when its data has crossed the link.
    pub(super) fn read(&mut self, now: u64, off: u64, len: u64) -> u64 {
        self.held.check_erases(self.ftl.c.erases);
        let (u0, u1) = (off / UNIT, (off + len - 1) / UNIT);
        // Only reads smaller than a flash page: a larger one reads its pages whole anyway.
        let continues =
            self.held.read_in_stream(off, off + len) && len < self.cfg.page_bytes as u64;
        let mut mapped = false;
        let held = continues
            && (u0..=u1).all(|u| {
                let addr = self.ftl.l2p[u as usize];
                mapped |= addr != NONE;
                addr == NONE || self.held.page(self.flash.page_of(addr as u64)).is_some()
            });
        let t0 = self.controller(now, if held && mapped { None } else { Some(off) }, false);
        let mut ready = t0;
        let mut last_page = u64::MAX;
        // The pages this command reads are kept for the next commands once it has read them
        // all (its own reads are as they were: a page it reads again is read again).
        let mut mine = [(u64::MAX, 0u64); PAGES_KEPT];
        let mut n = 0;
        for u in u0..=u1 {
            let addr = self.ftl.l2p[u as usize];
            if addr != NONE {
                let c = self.ftl.len_of(u as u32);
                let page = self.flash.page_of(addr as u64);
                let done = match if continues {
                    self.held.page(page)
                } else {
                    None
                } {
                    Some(at) => self.flash.read_sensed(addr as u64, c, t0, at),
                    None => {
                        let fresh = page != last_page;
                        let done = self.flash.read(addr as u64, c, t0, &mut last_page);
                        if fresh {
                            mine[n % PAGES_KEPT] = (page, self.flash.sensed);
                            n += 1;
                        }
                        done
                    }
                };
                ready = ready.max(done);
            }
        }
        for k in n.saturating_sub(PAGES_KEPT)..n {
            let (page, at) = mine[k % PAGES_KEPT];
            self.held.keep_page(page, at);
        }
        self.host.reads += 1;
        self.host.read_bytes += len;
        // The link is booked from the command's start (see flash.rs on booking order).
        let out = self.link_out;
        let x = self.link(out, t0, len);
        x.max(ready + len * self.link_ps_per_byte / 1000)
    }
}
