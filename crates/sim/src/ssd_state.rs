//! The SSD's own state beside the FTL's (link, controller cores, write buffer, pacing, held
//! units), for saving a drive and loading it back.

use super::*;

impl Ssd {
    /// Link, controller, entropy and random-generator state (for saving).
    pub fn io_state(&self) -> Vec<u64> {
        let mut v = vec![
            self.links[0][0],
            self.links[0][1],
            self.next_burst,
            self.chunks_mean,
            self.flash.rng.state(),
            self.pace_next,
            self.buf_last,
        ];
        v.extend_from_slice(&self.ctrl_busy);
        v.extend(self.held.state());
        v
    }

    pub fn set_io_state(&mut self, s: &[u64]) {
        // Only port 0's link is saved (as before ports had links of their own): a run ends
        // once every IO has completed, so the other ports' links are idle by the saved clock.
        self.links = vec![[s[0], s[1]]];
        self.port = 0;
        self.next_burst = s[2];
        self.chunks_mean = s[3];
        self.flash.rng = crate::rng::Rng::from_state(s[4]);
        self.pace_next = s[5];
        self.buf_last = s[6];
        let n = self.ctrl_busy.len();
        self.ctrl_busy.copy_from_slice(&s[7..7 + n]);
        self.held.set_state(&s[7 + n..]);
    }

    pub fn ring_state(&self) -> Vec<u64> {
        self.buf.iter().collect()
    }

    pub fn set_ring_state(&mut self, s: &[u64]) {
        self.buf.assign(s);
    }
}
