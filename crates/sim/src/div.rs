//! Division by the simulator's constants (the geometry's sizes, the cores, the unit's
//! chunks): the write path divides addresses several times per chunk, so not by `div`.

/// Division by a constant that is usually a power of two (the geometry's sizes), as a shift
/// when it is one: the hot paths divide addresses several times per IO.
#[derive(Clone, Copy, Debug)]
pub struct FastDiv {
    pub d: u64,
    shift: u32,
    pow2: bool,
}

impl FastDiv {
    pub fn new(d: u64) -> FastDiv {
        assert!(d > 0);
        FastDiv {
            d,
            shift: d.trailing_zeros(),
            pow2: d.is_power_of_two(),
        }
    }
    #[inline(always)]
    pub fn quot(self, x: u64) -> u64 {
        if self.pow2 {
            x >> self.shift
        } else {
            x / self.d
        }
    }
    #[inline(always)]
    pub fn modulo(self, x: u64) -> u64 {
        if self.pow2 {
            x & (self.d - 1)
        } else {
            x % self.d
        }
    }
}

/// Division of an address-sized value (below 2^32: chunk addresses are u32) by a constant
/// of the geometry, by multiplication and no branch: the write path divides an address
/// several times per chunk, and `FastDiv`'s test of its power-of-two flag cost more
/// instructions than the multiply (quotient: one add and one multiply; remainder: two
/// multiplies, Lemire's fastmod). Exact for every x < 2^32 and 1 <= d <= 2^32 (the tests
/// below check the edges): `quot` is the high word of (x + 1)·m, m = ⌊(2^64 − 1)/d⌋ =
/// 2^64/d − f with 0 < f <= 1, which is (x + 1)/d less under 2^−32 <= 1/d, so ⌊x/d⌋;
/// `modulo` takes the low word of x·⌈2^64/d⌉ (the fraction x/d to 64 bits) times d.
#[derive(Clone, Copy, Debug)]
pub struct Div32 {
    pub d: u64,
    m: u64,
    c: u64,
}

impl Div32 {
    pub fn new(d: u64) -> Div32 {
        assert!(d > 0 && d <= 1 << 32);
        let m = u64::MAX / d;
        Div32 {
            d,
            m,
            c: m.wrapping_add(1), // ⌈2^64/d⌉, 0 for d = 1 (every remainder 0)
        }
    }
    #[inline(always)]
    pub fn quot(self, x: u64) -> u64 {
        debug_assert!(x < 1 << 32);
        (((x + 1) as u128 * self.m as u128) >> 64) as u64
    }
    #[inline(always)]
    pub fn modulo(self, x: u64) -> u64 {
        debug_assert!(x < 1 << 32);
        ((self.c.wrapping_mul(x) as u128 * self.d as u128) >> 64) as u64
    }
    /// Quotient and remainder, the remainder from the quotient (one multiply less).
    #[inline(always)]
    pub fn divmod(self, x: u64) -> (u64, u64) {
        let q = self.quot(x);
        (q, x - q * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn div32_is_exact_below_2_pow_32() {
        let mut rng = Rng::new(7);
        let mut ds: Vec<u64> = (1..=300).collect();
        ds.extend((9..32).flat_map(|k| [(1u64 << k) - 1, 1 << k, (1 << k) + 1]));
        ds.extend([
            3 << 20,
            96 * 1152,
            5 * 7 * 11 * 13 * 17,
            u32::MAX as u64,
            1 << 32,
        ]);
        for &d in &ds {
            let f = Div32::new(d);
            let mut xs = vec![0, 1, d - 1, d, d + 1, u32::MAX as u64, u32::MAX as u64 - 1];
            for k in [1u64, 2, 3, 1000, (u32::MAX as u64) / d] {
                let m = k * d;
                xs.extend([m.saturating_sub(1), m, m + 1]);
            }
            xs.extend((0..200).map(|_| rng.below(1 << 32)));
            for x in xs.into_iter().filter(|&x| x < 1 << 32) {
                assert_eq!(f.quot(x), x / d, "{x} / {d}");
                assert_eq!(f.modulo(x), x % d, "{x} % {d}");
                assert_eq!(f.divmod(x), (x / d, x % d), "{x} divmod {d}");
            }
        }
    }
}
