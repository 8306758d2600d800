//! What the SSD controller holds for small sequential IO: units the write buffer keeps open
//! for sub-unit writes to merge into, and flash pages kept after a read. Only a small command
//! (a write smaller than a unit, a read smaller than a page) of a sequential stream uses
//! them: it continues where the last write (read) ended, which continued the one before, as
//! a controller detects a stream. Random IO (whose chance of continuing two commands in a
//! row is nil) and large IO run exactly as without them.
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
pub const PAGES_KEPT: usize = 8;

/// A unit written by a sub-unit write, at flash address `addr`, whose program starts at
/// `start` and is safe on flash at `durable` (0 when the buffer acknowledged it); the last
/// write into it ended at byte `end`.
#[derive(Clone, Copy)]
pub struct Open {
    pub lpn: u32,
    pub addr: u32,
    pub start: u64,
    pub durable: u64,
    pub end: u64,
}

const CLOSED: Open = Open {
    lpn: NONE,
    addr: NONE,
    start: 0,
    durable: 0,
    end: u64::MAX,
};

/// A flash page and when its array read finished.
#[derive(Clone, Copy)]
struct Page {
    page: u64,
    at: u64,
}

const NO_PAGE: Page = Page {
    page: u64::MAX,
    at: 0,
};

pub struct Held {
    open: [Open; OPEN_UNITS],
    open_next: usize,
    pages: [Page; PAGES_KEPT],
    pages_next: usize,
    /// The drive's erase count when `pages` was last valid.
    erases: u64,
    /// Where the last read and write ended, and how many commands in a row continued the
    /// one before.
    read_end: u64,
    reads_in_line: u64,
    write_end: u64,
    writes_in_line: u64,
}

impl Held {
    pub fn new() -> Held {
        Held {
            open: [CLOSED; OPEN_UNITS],
            open_next: 0,
            pages: [NO_PAGE; PAGES_KEPT],
            pages_next: 0,
            erases: 0,
            read_end: u64::MAX,
            reads_in_line: 0,
            write_end: u64::MAX,
            writes_in_line: 0,
        }
    }

    /// Nothing held (a purged drive).
    pub fn clear(&mut self) {
        *self = Held {
            erases: self.erases,
            ..Held::new()
        };
    }

    /// The unit open for `lpn` that a write at byte `off` continues, if its data is still at
    /// `addr`, where it was written (no full write, GC copy or TRIM since); the write ends at
    /// `end`.
    #[inline(always)]
    pub fn continue_unit(&mut self, lpn: u32, addr: u32, off: u64, end: u64) -> Option<Open> {
        let o = self
            .open
            .iter_mut()
            .find(|o| o.lpn == lpn && o.addr == addr && addr != NONE && o.end == off)?;
        o.end = end;
        Some(*o)
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
            self.pages = [NO_PAGE; PAGES_KEPT];
            self.erases = erases;
        }
    }

    /// Whether a read of `off..end` is part of a sequential stream (and may use the pages).
    #[inline(always)]
    pub fn read_in_stream(&mut self, off: u64, end: u64) -> bool {
        in_stream(&mut self.read_end, &mut self.reads_in_line, off, end)
    }

    /// Whether a write of `off..end` is part of a sequential stream (and may merge).
    #[inline(always)]
    pub fn write_in_stream(&mut self, off: u64, end: u64) -> bool {
        in_stream(&mut self.write_end, &mut self.writes_in_line, off, end)
    }

    /// When `page` was read, if it is held.
    #[inline(always)]
    pub fn page(&self, page: u64) -> Option<u64> {
        self.pages.iter().find(|p| p.page == page).map(|p| p.at)
    }

    #[inline(always)]
    pub fn keep_page(&mut self, page: u64, at: u64) {
        self.pages[self.pages_next] = Page { page, at };
        self.pages_next = (self.pages_next + 1) % PAGES_KEPT;
    }

    /// For saving.
    pub fn state(&self) -> Vec<u64> {
        let mut v = vec![
            self.open_next as u64,
            self.pages_next as u64,
            self.erases,
            self.read_end,
            self.reads_in_line,
            self.write_end,
            self.writes_in_line,
        ];
        for o in &self.open {
            v.extend([o.lpn as u64, o.addr as u64, o.start, o.durable, o.end]);
        }
        for p in &self.pages {
            v.extend([p.page, p.at]);
        }
        v
    }

    pub fn set_state(&mut self, s: &[u64]) {
        (self.open_next, self.pages_next, self.erases) = (s[0] as usize, s[1] as usize, s[2]);
        (
            self.read_end,
            self.reads_in_line,
            self.write_end,
            self.writes_in_line,
        ) = (s[3], s[4], s[5], s[6]);
        let (o, p) = s[7..].split_at(5 * OPEN_UNITS);
        for (k, w) in o.chunks_exact(5).enumerate() {
            self.open[k] = Open {
                lpn: w[0] as u32,
                addr: w[1] as u32,
                start: w[2],
                durable: w[3],
                end: w[4],
            };
        }
        for (k, w) in p.chunks_exact(2).enumerate() {
            self.pages[k] = Page {
                page: w[0],
                at: w[1],
            };
        }
    }
}

#[inline(always)]
fn in_stream(last_end: &mut u64, in_line: &mut u64, off: u64, end: u64) -> bool {
    *in_line = if off == *last_end { *in_line + 1 } else { 0 };
    *last_end = end;
    *in_line >= 2
}
