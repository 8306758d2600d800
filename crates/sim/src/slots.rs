//! The controller's command slots: a drive takes at most `queue_slots` commands at a time
//! (the contexts its front end tracks them in); a command sent while all are taken waits at
//! the port, in order, for the first to complete. Beyond that depth more outstanding commands
//! only wait longer: the controller's cores choose among the same number of commands, so
//! IOPS stop growing with queue depth there.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub struct Slots {
    n: usize,
    /// Completion times of the commands holding the slots (at most `n`).
    busy: BinaryHeap<Reverse<u64>>,
}

impl Slots {
    /// `n` = 0: no limit.
    pub fn new(n: u16) -> Slots {
        Slots {
            n: n as usize,
            busy: BinaryHeap::with_capacity(n as usize + 1),
        }
    }

    /// When a command sent at `now` takes a slot: at once if one is free, else when the
    /// earliest of the commands holding them completes. Commands are taken in the order
    /// they were sent, so these times never decrease.
    #[inline(always)]
    pub fn take(&mut self, now: u64) -> u64 {
        if self.n == 0 || self.busy.len() < self.n {
            return now;
        }
        let Reverse(t) = self.busy.pop().expect("a slot holder");
        now.max(t)
    }

    /// The command given a slot completes at `done` and frees it then.
    #[inline(always)]
    pub fn hold(&mut self, done: u64) {
        if self.n > 0 {
            self.busy.push(Reverse(done));
        }
    }
}
