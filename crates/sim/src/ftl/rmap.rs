//! The reverse map (flash chunk → logical unit) that garbage collection reads to move a
//! victim's live data. Without compression every chunk is a unit and a flat array is both
//! the fastest and the smallest map. With compression a unit takes 1 to 4 chunks of 1 KiB,
//! so a flat array needs an entry per chunk (4 MiB per GiB of flash) while at most one live
//! unit head per logical unit exists: an open-addressing table sized by the user capacity
//! holds only those (about 2.2 MiB per GiB at ρ = 0.28).

use super::big_vec;
use super::NONE;
use crate::driver::{prefetch, prefetch_ptr};

const EMPTY: u64 = u64::MAX;

pub enum RevMap {
    /// One logical unit per chunk address (stale entries are ignored: the valid bits say
    /// which chunks are live).
    Flat(Vec<u32>),
    /// Live unit heads only, as `addr << 32 | lpn`, linear probing with backward-shift
    /// deletion (no tombstones, so a long run does not degrade it).
    Hash(Vec<u64>),
}

impl RevMap {
    /// A flat map of `chunks` entries when `slots` is 0, else a table of `slots`.
    pub fn new(chunks: usize, slots: usize) -> RevMap {
        if slots == 0 {
            RevMap::Flat(big_vec(chunks, NONE))
        } else {
            RevMap::Hash(big_vec(slots, EMPTY))
        }
    }

    /// Where the search for `addr` starts: groups of 8 consecutive chunks hash to a random
    /// place and keep their order there, so the units of one flash page (written together
    /// at the frontier, read together by GC) share a cache line or two.
    #[inline(always)]
    fn home(t: &[u64], addr: u32) -> usize {
        let h = ((addr >> 3) as u64 ^ 0x5bd1_e995).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let i = ((h as u128 * t.len() as u128) >> 64) as usize + (addr & 7) as usize;
        if i >= t.len() {
            i - t.len()
        } else {
            i
        }
    }

    /// The unit whose head is at `addr` (which must be live).
    #[inline(always)]
    pub fn get(&self, addr: u64) -> u32 {
        match self {
            RevMap::Flat(v) => v[addr as usize],
            RevMap::Hash(t) => {
                let mut i = Self::home(t, addr as u32);
                loop {
                    let e = t[i];
                    if e == EMPTY {
                        return NONE;
                    }
                    if (e >> 32) as u32 == addr as u32 {
                        return e as u32;
                    }
                    i = if i + 1 == t.len() { 0 } else { i + 1 };
                }
            }
        }
    }

    /// GC found a live head at `addr` and will copy it soon: bring into cache what that
    /// copy reads at random. A flat entry is read in address order (cheap), its unit's map
    /// entry is not; a table slot is itself at random.
    #[inline(always)]
    pub fn prefetch_copy(&self, addr: u64, l2p: &[u32]) {
        match self {
            RevMap::Flat(v) => prefetch(&l2p[v[addr as usize] as usize]),
            RevMap::Hash(t) => prefetch(&t[Self::home(t, addr as u32)]),
        }
    }

    /// A walk that copies a block's live units in address order will soon reach `addr`:
    /// bring in the map entry of the unit there, if any (a stale or empty entry costs a
    /// useless prefetch at most, never a fault).
    #[inline(always)]
    pub fn prefetch_ahead(&self, addr: u64, l2p: &[u32]) {
        match self {
            RevMap::Flat(v) => {
                if let Some(e) = v.get(addr as usize).and_then(|&lpn| l2p.get(lpn as usize)) {
                    prefetch(e);
                }
            }
            RevMap::Hash(t) => prefetch(&t[Self::home(t, addr as u32)]),
        }
    }

    /// `addr`'s table slot will soon be written or removed (a no-op for a flat map, whose
    /// writes follow the frontier in order and whose entries are never removed).
    #[inline(always)]
    pub fn prefetch_slot(&self, addr: u32) {
        if let RevMap::Hash(t) = self {
            prefetch(&t[Self::home(t, addr)]);
        }
    }

    /// Bring in a flat map's entry at `addr` (nothing for a table, whose slots are fetched
    /// by `prefetch_slot`): a frontier die's entries a few pages on, in lines last touched
    /// when their block was last written, a miss to memory per 16 chunks written that the
    /// store of the die's next unit would wait on. Any address: a prefetch past the map's end
    /// is only a hint, never a fault, so no bounds check.
    #[inline(always)]
    pub fn prefetch_flat(&self, addr: u64) {
        if let RevMap::Flat(v) = self {
            prefetch_ptr(v.as_ptr().wrapping_add(addr as usize));
        }
    }

    /// The unit whose head is at `addr`, which stops being a live head (one search).
    #[inline(always)]
    pub fn take(&mut self, addr: u64) -> u32 {
        match self {
            RevMap::Flat(v) => v[addr as usize],
            RevMap::Hash(_) => {
                let lpn = self.get(addr);
                self.remove(addr as u32);
                lpn
            }
        }
    }

    #[inline(always)]
    pub fn set(&mut self, addr: u32, lpn: u32) {
        match self {
            RevMap::Flat(v) => v[addr as usize] = lpn,
            RevMap::Hash(t) => {
                let mut i = Self::home(t, addr);
                loop {
                    let e = t[i];
                    if e == EMPTY || (e >> 32) as u32 == addr {
                        t[i] = (addr as u64) << 32 | lpn as u64;
                        return;
                    }
                    i = if i + 1 == t.len() { 0 } else { i + 1 };
                }
            }
        }
    }

    /// The chunk at `addr` is no longer a live head.
    #[inline(always)]
    pub fn remove(&mut self, addr: u32) {
        let RevMap::Hash(t) = self else { return };
        let n = t.len();
        let mut i = Self::home(t, addr);
        loop {
            let e = t[i];
            if e == EMPTY {
                return;
            }
            if (e >> 32) as u32 == addr {
                break;
            }
            i = if i + 1 == n { 0 } else { i + 1 };
        }
        // Backward shift: move later entries of the run into the hole when their home
        // position allows it.
        let mut hole = i;
        let mut j = i;
        loop {
            j = if j + 1 == n { 0 } else { j + 1 };
            let e = t[j];
            if e == EMPTY {
                break;
            }
            let h = Self::home(t, (e >> 32) as u32);
            // Does the home h lie cyclically outside (hole, j]? Then the entry may move.
            let outside = if hole <= j {
                h <= hole || h > j
            } else {
                h <= hole && h > j
            };
            if outside {
                t[hole] = e;
                hole = j;
            }
        }
        t[hole] = EMPTY;
    }

    /// Entries held by a table (None for a flat map, which has no notion of live).
    pub fn live(&self) -> Option<usize> {
        match self {
            RevMap::Flat(_) => None,
            RevMap::Hash(t) => Some(t.iter().filter(|&&e| e != EMPTY).count()),
        }
    }

    pub fn clear(&mut self) {
        match self {
            RevMap::Flat(v) => v.iter_mut().for_each(|x| *x = NONE),
            RevMap::Hash(t) => t.iter_mut().for_each(|x| *x = EMPTY),
        }
    }

    pub fn memory_bytes(&self) -> usize {
        match self {
            RevMap::Flat(v) => v.capacity() * 4,
            RevMap::Hash(t) => t.capacity() * 8,
        }
    }

    /// The raw words, for saving and loading a drive's state.
    pub fn words(&mut self) -> (Option<&mut Vec<u32>>, Option<&mut Vec<u64>>) {
        match self {
            RevMap::Flat(v) => (Some(v), None),
            RevMap::Hash(t) => (None, Some(t)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::HashMap;

    #[test]
    fn hash_map_agrees_with_a_reference_under_churn() {
        let mut m = RevMap::new(1 << 20, 5000 + 5000 * 3 / 7 + 64);
        let mut want: HashMap<u32, u32> = HashMap::new();
        let mut rng = Rng::new(9);
        for step in 0..200_000u32 {
            let addr = rng.below(20_000) as u32;
            if want.len() < 5000 && rng.below(2) == 0 {
                m.set(addr, step);
                want.insert(addr, step);
            } else {
                m.remove(addr);
                want.remove(&addr);
            }
            if step % 97 == 0 {
                for (&a, &l) in want.iter().take(50) {
                    assert_eq!(m.get(a as u64), l, "addr {a}");
                }
                let probe = rng.below(20_000) as u32;
                assert_eq!(m.get(probe as u64), *want.get(&probe).unwrap_or(&NONE));
            }
        }
        for (&a, &l) in &want {
            assert_eq!(m.get(a as u64), l);
        }
    }
}
