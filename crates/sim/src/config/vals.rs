//! Reading a drive's merged parameter values: each value parsed and checked, an error naming
//! the parameter. The resolver and the geometry both read through this, neither through the
//! other.

pub(super) struct Vals<'a>(pub(super) &'a [(String, String)]);

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
            return Err(format!("sim parameter {k}={v} must be greater than zero"));
        }
        Ok(v)
    }
    pub(super) fn nonneg(&self, k: &str) -> Result<f64, String> {
        let v = self.num(k)?;
        if v < 0.0 {
            return Err(format!("sim parameter {k}={v} must not be negative"));
        }
        Ok(v)
    }
    pub(super) fn count(&self, k: &str) -> Result<u32, String> {
        let v = self.num(k)?;
        if v < 1.0 || v.fract() != 0.0 || v > u32::MAX as f64 {
            return Err(format!(
                "sim parameter {k}={v} must be a whole number of at least 1"
            ));
        }
        Ok(v as u32)
    }
    pub(super) fn on(&self, k: &str) -> bool {
        self.raw(k) == "on"
    }
}
