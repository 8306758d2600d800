//! Reading a drive's merged parameter values: each value parsed and checked, an error naming
//! the parameter. The resolver and the geometry both read through this, neither through the
//! other.

pub(super) struct Vals<'a>(pub(super) &'a [(String, String)]);

/// A number as a refusal shows it: as Rust writes it up to 10^15, beyond in exponent form to six
/// significant digits (user_gb=1e300 was echoed as its 301 digits, and the flash it needs as as
/// many more).
pub(super) fn shown(x: f64) -> String {
    if x.abs() < 1e15 {
        return format!("{x}");
    }
    let s = format!("{x:.5e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    format!(
        "{}e{exp}",
        mantissa.trim_end_matches('0').trim_end_matches('.')
    )
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
    }
}
