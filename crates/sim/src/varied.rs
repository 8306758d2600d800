//! A NAND or controller time and its spread, worked out once for the times a command path
//! varies often (flash.rs draws them).

/// A nominal time and its spread (`Flash::spread`, in 1/2^16) worked out once: a draw is
/// `lo + span · u` for u in [0, 2) from the draw's bits, the same as multiplying the time by
/// the spread at every draw, as `vary` does for times that are not known ahead. A command
/// draws five or so times (its controller time, its program, GC's reads and programs).
#[derive(Clone, Copy, Debug)]
pub struct Varied {
    pub(crate) lo: u64,
    span: u64,
}

impl Varied {
    pub(crate) fn new(base: u64, spread: u64) -> Varied {
        let span = base.wrapping_mul(spread) >> 16;
        Varied {
            lo: base.wrapping_sub(span),
            span,
        }
    }

    /// The nominal time.
    #[inline(always)]
    pub(crate) fn base(self) -> u64 {
        self.lo.wrapping_add(self.span)
    }

    /// The time times a triangular factor in [1 − spread, 1 + spread]: the sum of two
    /// 16-bit uniforms from the low half of `r`.
    #[inline(always)]
    pub(crate) fn by(self, r: u64) -> u64 {
        let sum = (r & 0xFFFF) + ((r >> 16) & 0xFFFF); // [0, 2^17)
        self.lo.wrapping_add(self.span.wrapping_mul(sum) >> 16)
    }
}
