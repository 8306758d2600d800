//! Reading a drive's merged parameter values: each value parsed and checked, an error naming
//! the parameter. The resolver and the geometry both read through this, neither through the
//! other.

pub(super) struct Vals<'a>(pub(super) &'a [(String, String)]);

/// A number as a refusal shows it: as Rust writes it up to 10^15, beyond in exponent form to six
/// significant digits (user_gb=1e300 was echoed as its 301 digits, and the flash it needs as as
/// many more).
pub(super) fn shown(x: f64) -> String {
    // and a tiny one too: link_mbps=1e-300 was echoed as 0.000… in 300 digits
    if x.abs() < 1e15 && (x == 0.0 || x.abs() >= 1e-6) {
        return format!("{x}");
    }
    let s = format!("{x:.5e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    format!(
        "{}e{exp}",
        mantissa.trim_end_matches('0').trim_end_matches('.')
    )
}

/// The longest any time parameter may be, in seconds. The simulator's clock counts nanoseconds
/// in 64 bits: a time of 1e300 µs saturated to its largest value and wrapped the clock
/// (t_prog_us=1e300 gave a "0.2 s" run of 31,783 s at 0.009 IOPS), or its per-second series
/// grew past memory (overhead_us=1e300: the process aborted allocating 885 GB).
pub(super) const MAX_TIME_S: f64 = 3600.0;
/// The slowest a link or channel may be, in MB/s: a transfer at 1e-300 MB/s took so long that
/// channel_mbps=1e-300 wrapped the clock (every figure the default drive's) and link_mbps=1e-300
/// never ended.
pub(super) const MIN_RATE_MBPS: f64 = 1.0;

/// `x`, the value of parameter `k`, unless it is above `most`: the one wording of that bound
/// (`what`: the bound in words, where the number alone does not say what it is).
fn bounded(k: &str, x: f64, most: f64, what: Option<&str>) -> Result<f64, String> {
    if x > most {
        let words = what.map(|w| format!(" ({w})")).unwrap_or_default();
        return Err(format!(
            "sim parameter {k}={} must be at most {}{words}",
            shown(x),
            shown(most)
        ));
    }
    Ok(x)
}

impl Vals<'_> {
    pub(super) fn raw(&self, k: &str) -> &str {
        self.0
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }
    pub(super) fn num(&self, k: &str) -> Result<f64, String> {
        let s = self.raw(k);
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("sim parameter {k}={s:?} is not a number"))
    }
    pub(super) fn pos(&self, k: &str) -> Result<f64, String> {
        let v = self.num(k)?;
        if v <= 0.0 {
            return Err(format!(
                "sim parameter {k}={} must be greater than zero",
                shown(v)
            ));
        }
        Ok(v)
    }
    pub(super) fn nonneg(&self, k: &str) -> Result<f64, String> {
        let v = self.num(k)?;
        if v < 0.0 {
            return Err(format!(
                "sim parameter {k}={} must not be negative",
                shown(v)
            ));
        }
        Ok(v)
    }
    pub(super) fn count(&self, k: &str) -> Result<u32, String> {
        let v = self.num(k)?;
        if v < 1.0 || v.fract() != 0.0 || v > u32::MAX as f64 {
            return Err(format!(
                "sim parameter {k}={} must be a whole number of at least 1",
                shown(v)
            ));
        }
        Ok(v as u32)
    }
    /// A time parameter in nanoseconds (`ns_per_unit` of them per unit given; zero allowed
    /// where `zero` says so), at most `MAX_TIME_S`.
    pub(super) fn time_ns(&self, k: &str, ns_per_unit: f64, zero: bool) -> Result<u64, String> {
        let x = if zero { self.nonneg(k)? } else { self.pos(k)? };
        let most = MAX_TIME_S * 1e9 / ns_per_unit;
        if x > most {
            return Err(format!(
                "sim parameter {k}={} must be at most {} (an hour)",
                shown(x),
                shown(most)
            ));
        }
        let ns = (x * ns_per_unit).round() as u64;
        if ns == 0 && !zero {
            // t_read_us=1e-9 passed "greater than zero" and then read in 0 ns
            return Err(format!(
                "sim parameter {k}={} must be at least {} (a nanosecond)",
                shown(x),
                shown(1.0 / ns_per_unit)
            ));
        }
        Ok(ns)
    }
    /// A value from 0 to `most`, which a refusal gives with `what`, the bound in words. A size
    /// beyond `most` is a buffer or cache beyond any drive's, whose slots the simulator would
    /// allocate (buffer_kib=1e300 asked for 32 GiB of them and aborted the process).
    pub(super) fn at_most(&self, k: &str, most: f64, what: &str) -> Result<f64, String> {
        bounded(k, self.nonneg(k)?, most, Some(what))
    }
    /// A percentage parameter from 0 to `most`.
    pub(super) fn pct(&self, k: &str, most: f64) -> Result<f64, String> {
        self.at_most(k, most, "a percentage")
    }
    /// A whole number from 1 to `most`.
    pub(super) fn count_at_most(&self, k: &str, most: u32) -> Result<u32, String> {
        bounded(k, self.count(k)? as f64, most as f64, None).map(|n| n as u32)
    }
    /// A link's or channel's rate in MB/s, at least `MIN_RATE_MBPS`.
    pub(super) fn rate(&self, k: &str) -> Result<f64, String> {
        let x = self.pos(k)?;
        if x < MIN_RATE_MBPS {
            return Err(format!(
                "sim parameter {k}={} must be at least {MIN_RATE_MBPS} MB/s",
                shown(x)
            ));
        }
        Ok(x)
    }
    pub(super) fn on(&self, k: &str) -> bool {
        self.raw(k) == "on"
    }
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_huge_number_is_shown_in_exponent_form_and_an_ordinary_one_as_written() {
        assert_eq!(shown(1e300), "1e300");
        assert_eq!(shown(1.2801015808000001e300), "1.2801e300");
        assert_eq!(shown(-2.5e20), "-2.5e20");
        assert_eq!(shown(0.25), "0.25");
        assert_eq!(shown(400.0), "400");
        assert_eq!(shown(1e14), "100000000000000");
        assert_eq!(shown(1e-300), "1e-300");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(0.000001), "0.000001");
    }
}
