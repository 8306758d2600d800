//! The columns the per-IO walks of `iolab trace analyze` read and write (streams.rs walks them,
//! streams_tab.rs tabulates them): a chunk of IOs, the rule, a tabulated group, and the step of
//! an IO's time. Apart from both so that neither walk nor tabulator imports the other's types.

/// The SEQ rule's parameters and the step length.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub step_ns: i64,
    pub lookback: usize,
    pub gap_bytes: u64,
    pub has_latency: bool,
    /// The most steps an IO's issue or completion may reach: the per-step tables grow to the
    /// highest step reached, so a long trace cut into tiny steps would ask for more memory
    /// than the machine has (and abort), not fail.
    pub max_steps: i64,
}

/// One chunk's columns (or a run of them), in issue order. `lat` < 0 (or NaN) means no
/// response time; `dev` is a device code per IO when there are several devices.
pub struct Chunk<'a> {
    pub time_ns: &'a [i64],
    /// 1 for a write, 0 for a read
    pub write: &'a [u8],
    pub offset: &'a [i64],
    pub size: &'a [i64],
    pub lat: &'a [f64],
    pub dev: Option<&'a [i32]>,
}

/// One (step, seq, write, size) group of a chunk: IOs, latencies counted, their sum and
/// maximum (the maximum is -1 when the group has no latency).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub step: i64,
    pub seq: bool,
    pub write: bool,
    pub size: i64,
    pub ios: i64,
    pub lat_n: i64,
    pub lat_sum: f64,
    pub lat_max: f64,
}

/// A chunk's tabulation, or (when it has too many slots for a dense table) its SEQ flags
/// for the caller to group.
pub enum Tab {
    Rows(Vec<Row>),
    Flags(Vec<bool>),
}

/// The step of each of a run of sorted times, with a division only when a time leaves the
/// step of the one before (a 64-bit division per IO was a sixth of the walk).
pub(crate) struct StepOf {
    step_ns: i64,
    cur: i64,
    lo: i64,
    hi: i64,
}

impl StepOf {
    pub(crate) fn new(step_ns: i64) -> StepOf {
        StepOf {
            step_ns,
            cur: 0,
            lo: 0,
            hi: 0,
        }
    }

    #[inline]
    pub(crate) fn get(&mut self, t: i64) -> i64 {
        if t < self.lo || t >= self.hi {
            self.cur = t.div_euclid(self.step_ns);
            self.lo = self.cur * self.step_ns;
            self.hi = self.lo.saturating_add(self.step_ns);
        }
        self.cur
    }
}
