//! The controller's command slots: a drive takes at most `queue_slots` commands at a time
//! (the contexts its front end tracks them in); a command sent while all are taken waits at
//! the port, in order, for the first to complete. Beyond that depth more outstanding commands
//! only wait longer: the controller's cores choose among the same number of commands, so
//! IOPS stop growing with queue depth there.

use crate::sorted::SortedRing;

pub struct Slots {
    n: usize,
    /// Completion times of the commands holding the slots (at most `n`), in order: a write
    /// acknowledged from the buffer completes after the ones before it, so its time goes in
    /// at the back, where a heap's replacement of its top sifted down six levels (64 slots)
    /// for every command, each a coin toss for the branch predictor.
    busy: SortedRing<u64>,
    /// `take` found every slot held and gave the earliest holder's slot away: that entry,
    /// still at the front, is replaced by the next `hold`.
    given: bool,
    /// Whether `busy` is kept. A slot whose command has completed by `now` is free for every
    /// later command (commands are sent in time order), so only the slots held past `now`
    /// matter, and those are the outstanding commands that complete later. So while fewer
    /// commands are outstanding than there are slots (QD32 on 64 slots) a slot is free and
    /// nothing is kept; `busy` is filled from the outstanding commands once as many are
    /// outstanding as there are slots, and dropped when fewer are again. (A slot handed
    /// over, to a command that waited for it, came from a command still outstanding; but
    /// until the clock reaches the time it was handed over every slot is held past it, by
    /// commands other than that one: more are outstanding than there are slots.)
    kept: bool,
}

impl Slots {
    /// `n` = 0: no limit.
    pub fn new(n: u16) -> Slots {
        Slots {
            n: n as usize,
            busy: SortedRing::with_capacity(n as usize + 1),
            given: false,
            kept: false,
        }
    }

    /// When a command sent at `now` takes a slot: at once if one is free, else when the
    /// earliest of the commands holding them completes. Commands are taken in the order
    /// they were sent, so these times never decrease. `outstanding` holds the drive's
    /// commands not yet completed, as `done << 32 | id`.
    #[inline(always)]
    pub fn take(&mut self, now: u64, outstanding: &SortedRing<u128>) -> u64 {
        if self.n == 0 {
            return now;
        }
        let fewer = outstanding.len() < self.n;
        if !self.kept {
            if fewer {
                return now;
            }
            self.keep(now, outstanding);
        } else if fewer {
            self.kept = false;
            return now;
        }
        if self.busy.len() < self.n {
            return now;
        }
        debug_assert!(!self.given, "take twice without a hold");
        let t = self.busy.peek().expect("a slot holder");
        self.given = true;
        now.max(t)
    }

    /// The slots held past `now`: the outstanding commands completing after it.
    #[cold]
    fn keep(&mut self, now: u64, outstanding: &SortedRing<u128>) {
        self.busy.assign(&[]);
        for k in outstanding.iter() {
            let done = (k >> 32) as u64;
            if done > now {
                self.busy.push(done);
            }
        }
        self.kept = true;
    }

    /// The command given a slot completes at `done` and frees it then.
    #[inline(always)]
    pub fn hold(&mut self, done: u64) {
        if self.given {
            self.busy.replace_least(done);
            self.given = false;
        } else if self.kept {
            self.busy.push(done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// The slot a command is given is replaced in place by its completion: the times must be
    /// those of the plain pop and push, saturated (more commands than slots) or not.
    #[test]
    fn a_slot_replaced_in_place_gives_the_times_of_a_pop_and_a_push() {
        let mut rng = Rng::new(7);
        for n in [1u16, 3, 64] {
            let mut slots = Slots::new(n);
            let mut plain: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
            // The drive's outstanding commands, completed (popped) as the driver does: those
            // done before `now`, and some of those done at `now`.
            let mut out: SortedRing<u128> = SortedRing::with_capacity(4);
            let (mut now, mut waited, mut unkept) = (0, 0, 0);
            for id in 0..40_000u128 {
                // Bursts and lulls, so the slots are all taken, then not, then taken again.
                now += if (id / 2000) % 2 == 0 {
                    rng.below(50)
                } else {
                    rng.below(50 * n as u64 + 2000)
                };
                while let Some(k) = out.peek() {
                    let done = (k >> 32) as u64;
                    if done < now || done == now && rng.below(2) == 0 {
                        out.pop();
                    } else {
                        break;
                    }
                }
                let t = slots.take(now, &out);
                let want = if plain.len() < n as usize {
                    now
                } else {
                    now.max(plain.pop().unwrap().0)
                };
                assert_eq!(t, want, "{n} slots");
                waited += (t > now) as u32;
                unkept += !slots.kept as u32;
                let done = t + rng.below(50 * n as u64 + 400);
                slots.hold(done);
                plain.push(Reverse(done));
                out.push((done as u128) << 32 | id);
            }
            assert!(
                waited > 1000,
                "{n} slots: the slots were never all taken ({waited})"
            );
            assert!(unkept > 1000, "{n} slots: the slots were always kept");
        }
    }
}
