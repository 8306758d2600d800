//! What the SSD controller holds for small sequential IO: units the write buffer keeps open
//! for sub-unit writes to merge into, and flash pages kept after a read. A few of each serve
//! a sequential stream (its next small IO falls in the unit or page of the last) and almost
//! never a random one.
//!
//! A real controller programs a partly written unit once the host has finished it: a 0.5 KiB
//! stream fills the buffered unit, it does not read the unit back and program it before each
//! of its eight writes. Here the program is booked at the unit's first write and stands for
//! that one program. With an acknowledging buffer a later write merges while the unit is
//! open; a write that must be on flash merges only while the unit's program has not started,
//! and completes with it.
//!
//! A page read for a host command stays in the controller: a later command's read of it (the
//! next small IO of a sequential stream) needs only the channel transfer, and no mapping
//! lookup by the core owning its stripe (the controller finds the data it holds). Pages are
//! dropped whenever a block is erased, as their data may be gone.

use crate::ftl::NONE;

const OPEN_UNITS: usize = 8;
const PAGES: usize = 8;

/// A unit written by a sub-unit write, at flash address `addr`, whose program starts at
/// `start` and is safe on flash at `durable` (0 when the buffer acknowledged it).
#[derive(Clone, Copy)]
pub struct Open {
    pub lpn: u32,
    pub addr: u32,
    pub start: u64,
    pub durable: u64,
}

const CLOSED: Open = Open { lpn: NONE, addr: NONE, start: 0, durable: 0 };

/// A flash page and when its array read finished.
#[derive(Clone, Copy)]
struct Page {
    page: u64,
    at: u64,
}

const NO_PAGE: Page = Page { page: u64::MAX, at: 0 };

pub struct Held {
    open: [Open; OPEN_UNITS],
    open_next: usize,
    pages: [Page; PAGES],
    pages_next: usize,
    /// The drive's erase count when `pages` was last valid.
    erases: u64,
}

impl Held {
    pub fn new() -> Held {
        Held { open: [CLOSED; OPEN_UNITS], open_next: 0, pages: [NO_PAGE; PAGES], pages_next: 0, erases: 0 }
    }

    /// Nothing held (a purged drive).
    pub fn clear(&mut self) {
        *self = Held { erases: self.erases, ..Held::new() };
    }

    /// The unit open for `lpn`, if its data is still at `addr`, where it was written (no
    /// full write, GC copy or TRIM since).
    #[inline(always)]
    pub fn open_unit(&self, lpn: u32, addr: u32) -> Option<Open> {
        self.open.iter().find(|o| o.lpn == lpn && o.addr == addr && addr != NONE).copied()
    }

    #[inline(always)]
    pub fn keep_open(&mut self, o: Open) {
        self.open[self.open_next] = o;
        self.open_next = (self.open_next + 1) % OPEN_UNITS;
    }

    /// Drops the pages when blocks were erased since (`erases` is the drive's count).
    #[inline(always)]
    pub fn check_erases(&mut self, erases: u64) {
        if erases != self.erases {
            self.pages = [NO_PAGE; PAGES];
            self.erases = erases;
        }
    }

    /// When `page` was read, if it is held.
    #[inline(always)]
    pub fn page(&self, page: u64) -> Option<u64> {
        self.pages.iter().find(|p| p.page == page).map(|p| p.at)
    }

    #[inline(always)]
    pub fn keep_page(&mut self, page: u64, at: u64) {
        self.pages[self.pages_next] = Page { page, at };
        self.pages_next = (self.pages_next + 1) % PAGES;
    }

    /// For saving.
    pub fn state(&self) -> Vec<u64> {
        let mut v = vec![self.open_next as u64, self.pages_next as u64, self.erases];
        for o in &self.open {
            v.extend([o.lpn as u64, o.addr as u64, o.start, o.durable]);
        }
        for p in &self.pages {
            v.extend([p.page, p.at]);
        }
        v
    }

    pub fn set_state(&mut self, s: &[u64]) {
        (self.open_next, self.pages_next, self.erases) = (s[0] as usize, s[1] as usize, s[2]);
        let (o, p) = s[3..].split_at(4 * OPEN_UNITS);
        for (k, w) in o.chunks_exact(4).enumerate() {
            self.open[k] = Open { lpn: w[0] as u32, addr: w[1] as u32, start: w[2], durable: w[3] };
        }
        for (k, w) in p.chunks_exact(2).enumerate() {
            self.pages[k] = Page { page: w[0], at: w[1] };
        }
    }
}
