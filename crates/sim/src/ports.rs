//! Several host paths (ports) into one drive, as into a dual-ported drive: the run's
//! outstanding IO slots are handed out path by path, each path keeps its own slots busy, and
//! each path's IOs are counted apart. Path p comes in on the drive's port p (`Device::set_port`):
//! each port has a host link of its own (an SSD's; an HDD's media, not its link, bounds it),
//! while the back end behind the ports (controller cores, command slots, buffer, dies) is the
//! one drive's. So a link-bound workload (sequential reads at the link's rate) gains from a
//! second port and a back-end-bound one (small random reads) does not.

use crate::driver::{drive, validate, Device, OpResult, Progress, RunResult, RunSpec};
use crate::source::StreamSource;

/// `driver::run` with the outstanding IO coming in over several host paths into the one
/// drive: `paths[p]` of it are path p's. Empty: one path.
pub fn run_paths<D: Device>(
    dev: &mut D,
    spec: &RunSpec,
    paths: &[u32],
    progress: Progress,
) -> Result<RunResult, String> {
    validate(spec, dev.capacity())?;
    let ports = Ports::new(paths, spec.oio)?;
    dev.set_entropy(spec.entropy);
    dev.seed(spec.seed);
    let mut src = StreamSource::new(spec, dev.capacity(), dev.clock());
    drive(
        dev,
        &mut src,
        ports,
        spec.duration_ns,
        spec.bytes_budget,
        progress,
    )
}

/// What one path carried: its IOs by direction.
#[derive(Clone, Debug, Default)]
pub struct PathResult {
    pub read: OpResult,
    pub write: OpResult,
}

impl PathResult {
    #[inline]
    pub fn record(&mut self, write: bool, bytes: u64, lat: u64) {
        let op = if write {
            &mut self.write
        } else {
            &mut self.read
        };
        op.ios += 1;
        op.bytes += bytes;
        op.hist.record(lat);
    }
}

/// Which path each IO slot belongs to; no paths: one path, no per-path counts.
pub(crate) struct Ports {
    total: u32,
    oio: Vec<u32>,
    path_of: Vec<usize>,
    issued: Vec<u64>,
}

impl Ports {
    /// `paths[p]`: path p's outstanding IO; together they are the run's `oio`.
    pub(crate) fn new(paths: &[u32], oio: u32) -> Result<Ports, String> {
        let sum: u64 = paths.iter().map(|&p| p as u64).sum();
        if !paths.is_empty() && (paths.contains(&0) || sum != oio as u64) {
            return Err(format!(
                "paths {paths:?}: each path needs outstanding IO and together they must hold the workload's {oio}"
            ));
        }
        let path_of = (0..paths.len())
            .flat_map(|p| std::iter::repeat_n(p, paths[p] as usize))
            .collect();
        Ok(Ports {
            total: oio,
            oio: paths.to_vec(),
            path_of,
            issued: vec![0; paths.len()],
        })
    }

    /// The run's outstanding IO over all paths.
    pub(crate) fn oio(&self) -> u32 {
        self.total
    }

    pub(crate) fn len(&self) -> usize {
        self.oio.len()
    }

    #[inline(always)]
    pub(crate) fn path_of(&self, id: u32) -> Option<usize> {
        self.path_of.get(id as usize).copied()
    }

    /// A free slot for the next IO, from the path that has issued least for its share of the
    /// outstanding IO. Closed loop that is the slot that just completed (one is free at a
    /// time); open loop (a rate) each path gets its share of the arrivals, as fio's rate split
    /// over real paths gives it.
    #[inline(always)]
    pub(crate) fn take(&mut self, free: &mut Vec<u32>) -> u32 {
        if self.oio.is_empty() {
            return free.pop().unwrap();
        }
        let behind = |id: u32| {
            let p = self.path_of[id as usize];
            self.issued[p] as f64 / self.oio[p] as f64
        };
        let i = (0..free.len())
            .min_by(|&a, &b| behind(free[a]).total_cmp(&behind(free[b])))
            .unwrap();
        let id = free.swap_remove(i);
        self.issued[self.path_of[id as usize]] += 1;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::run_paths;
    use crate::driver::tests::Counter;
    use crate::driver::{RunSpec, NS};

    #[test]
    fn paths_keep_their_outstanding_io_and_share_a_rate() {
        let mut dev = Counter {
            now: 0,
            pending: vec![],
            offsets: vec![],
        };
        let mut spec = RunSpec::single(true, false, 4096, 6);
        spec.duration_ns = Some(NS / 10);
        let res = run_paths(&mut dev, &spec, &[2, 4], &mut |_, _| true).unwrap();
        let ios: Vec<u64> = res.paths.iter().map(|p| p.read.ios).collect();
        assert_eq!(ios.iter().sum::<u64>(), res.read.ios);
        // closed loop at a fixed latency: each path's IOs follow its outstanding IO
        assert!(
            (ios[1] as f64 / ios[0] as f64 - 2.0).abs() < 0.01,
            "{ios:?}"
        );
        // open loop: the arrivals are shared, not all given to the slot freed last
        spec.rate_iops = Some(10_000.0);
        let res = run_paths(&mut dev, &spec, &[3, 3], &mut |_, _| true).unwrap();
        let ios: Vec<u64> = res.paths.iter().map(|p| p.read.ios).collect();
        assert!(ios[0].abs_diff(ios[1]) <= 1 && ios[0] > 400, "{ios:?}");
        assert!(run_paths(&mut dev, &spec, &[3, 2], &mut |_, _| true).is_err());
        assert!(run_paths(&mut dev, &spec, &[6, 0], &mut |_, _| true).is_err());
    }
}
