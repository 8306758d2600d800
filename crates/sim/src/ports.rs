//! Several host paths (ports) into one drive, as into a dual-ported drive: the run's
//! outstanding IO slots are handed out path by path, each path keeps its own slots busy, and
//! each path's IOs are counted apart. Path p comes in on the drive's port p (`Device::set_port`):
//! each port has a host link of its own (an SSD's; an HDD's media, not its link, bounds it),
//! while the back end behind the ports (controller cores, command slots, buffer, dies) is the
//! one drive's. So a link-bound workload (sequential reads at the link's rate) gains from a
//! second port and a back-end-bound one (small random reads) does not.

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
