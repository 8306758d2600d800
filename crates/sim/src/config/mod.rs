//! Drive parameters, presets and their validation: the one source of truth for what a
//! simulated drive is. Python lists presets and describes targets through `presets_json`
//! and `resolve`, so names, units and defaults live only here.
//!
//! Conventions: capacities in decimal GB (10^9 B) as drives are sold; over-provisioning
//! ρ = (physical − user)/user; the spare factor (physical − user)/physical is reported too.
//! An FTL block is a superblock: one erase block from every plane of every die, written
//! stripe by stripe (one multi-plane page per die, then the next die).

use serde_json::{json, Value};

mod acts;
mod geometry;
#[cfg(test)]
mod golden;
mod params;
mod presets;
mod resolve;
mod resolve_hdd;
mod vals;

pub use params::*;
pub use presets::*;
pub use resolve::resolve_ssd;
pub use resolve_hdd::resolve_hdd;

/// A preset's drive with the overrides given: here, above both resolvers, so neither imports the
/// other (resolve_hdd reads resolve's shared helpers).
pub fn resolve(preset: &str, overrides: &[(String, String)]) -> Result<DriveConfig, String> {
    match resolve::find_preset(preset)?.kind {
        Kind::Ssd => resolve_ssd(preset, overrides).map(DriveConfig::Ssd),
        Kind::Hdd => resolve_hdd(preset, overrides).map(DriveConfig::Hdd),
    }
}

/// The smallest size above the one given that the preset takes (an SSD's user_gb, its flash
/// scaled with it; an HDD's capacity_gb, whole 4 KiB blocks); None: the size is not given, or
/// the refusal is not about it. Python refuses a copy sized by --capacity-limit with it.
pub fn smallest_size_gb(preset: &str, overrides: &[(String, String)]) -> Option<f64> {
    match resolve::find_preset(preset).ok()?.kind {
        Kind::Ssd => resolve::smallest_user_gb(preset, overrides),
        Kind::Hdd => {
            resolve::smallest_above(overrides, "capacity_gb", |o| resolve_hdd(preset, o).is_ok())
        }
    }
}

pub const UNIT: u64 = 4096; // mapping unit, bytes

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ssd,
    Hdd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Greedy,
    Fifo,
    CostBenefit,
    Random,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Greedy => "greedy",
            Policy::Fifo => "fifo",
            Policy::CostBenefit => "cost-benefit",
            Policy::Random => "random",
        }
    }
}

#[derive(Clone, Debug)]
pub struct SsdConfig {
    pub preset: String,
    /// Every parameter's value (preset merged with overrides), for display.
    pub params: Vec<(String, String)>,
    /// Only what the user changed: preset + overrides rebuild this drive.
    pub overrides: Vec<(String, String)>,
    pub user_units: u32,
    pub channels: u32,
    pub dies: u32,
    /// Units go to dies in turn by address rather than to the least-busy die.
    pub striped: bool,
    pub planes: u32,
    pub pages_per_block: u32,
    pub page_bytes: u32,
    pub t_read_ns: u64,
    pub t_prog_ns: u64,
    pub t_erase_ns: u64,
    pub slc_t_read_ns: u64,
    pub slc_t_prog_ns: u64,
    pub channel_mbps: f64,
    pub link_mbps: f64,
    pub link_full_duplex: bool,
    pub link: String,
    pub overhead_ns: u64,
    /// Core time a write command keeps after its data is buffered (not waited for).
    pub write_core_ns: u64,
    /// Core time a write takes before its acknowledgement, beyond `overhead_ns`.
    pub write_path_ns: u64,
    pub cores: u32,
    pub queue_slots: u16, // commands the controller takes at once (0 = no limit)
    /// Share of commands bound to the core owning their LBA stripe.
    pub core_by_lba: f64,
    /// Half-width of the triangular spread of NAND and controller times, as a share.
    pub spread: f64,
    pub read_retry: f64,
    /// Read time of lower / upper pages: t_read × (1 ∓ this share).
    pub read_skew: f64,
    pub gc_start: f64,
    pub gc_choices: u16, // greedy compares this many random blocks (0 = all)
    pub gc_slice: u32,
    pub gc_copy_ns: u64,
    pub gc_switch_ns: u64,
    pub gc_switch_every: u64,
    /// The periodic GC pass: its period (0 = none) and length, and the share of its victims
    /// taken by the walk over the blocks instead of the policy.
    pub gc_pass_period_ns: u64,
    pub gc_pass_ns: u64,
    pub gc_pass_share: f64,
    /// Foreground GC paces its copying by the average cost of about this many victims
    /// (0: each victim's own), its free blocks taking up the difference.
    pub gc_pace_victims: u32,
    pub bg_period_ns: u64,
    pub bg_burst_ns: u64,
    pub compress_floor: f64,
    pub compress_ceiling: f64, // stored share of an incompressible unit (>= 1)
    pub compress_limit: f64,
    pub buffer_units: u32,
    /// Buffer occupancy (share) at which admission matches the drain rate; 0 = no pacing.
    pub pace: f64,
    pub plp: bool,
    pub policy: Policy,
    pub gc_reserve: u32,
    pub bg_gc: bool,
    pub bg_reserve_pct: f64,
    pub idle_ns: u64,
    pub compression: bool,
    pub bits_per_cell: u32,
    // Derived geometry.
    pub chunks_per_unit: u32, // G: 1, or 4 (1 KiB chunks) with compression
    pub chunks_per_page: u32,
    pub chunks_per_prog: u32, // one multi-plane page on one die
    pub cpb: u32,             // chunks per FTL block (superblock)
    pub n_blocks: u32,        // all FTL blocks
    pub n_slc: u32,           // of which SLC-mode
    pub slc_cpb: u32,         // chunks used in an SLC-mode block
}

impl SsdConfig {
    pub fn n_main(&self) -> u32 {
        self.n_blocks - self.n_slc
    }
    pub fn chunk_bytes(&self) -> u64 {
        UNIT / self.chunks_per_unit as u64
    }
    pub fn physical_bytes(&self) -> u64 {
        self.n_blocks as u64 * self.cpb as u64 * self.chunk_bytes()
    }
    pub fn user_bytes(&self) -> u64 {
        self.user_units as u64 * UNIT
    }
    /// ρ = (physical − user)/user over all the flash.
    pub fn op(&self) -> f64 {
        (self.physical_bytes() as f64 - self.user_bytes() as f64) / self.user_bytes() as f64
    }
    /// ρ of the main area alone, (main − user)/user: the spare garbage collection has. An
    /// SLC cache's blocks count in `op` at their main-area size but hold no spare for GC
    /// (client-nvme-slc: 14.8 % over all the flash, 9.7 % here).
    pub fn op_for_gc(&self) -> f64 {
        let main = self.n_main() as f64 * self.cpb as f64 * self.chunk_bytes() as f64;
        (main - self.user_bytes() as f64) / self.user_bytes() as f64
    }
    pub fn spare_factor(&self) -> f64 {
        (self.physical_bytes() as f64 - self.user_bytes() as f64) / self.physical_bytes() as f64
    }
    pub fn total_chunks(&self) -> u64 {
        self.n_blocks as u64 * self.cpb as u64
    }
    /// Slots of the compressing drive's reverse-map table: live unit heads at a load of
    /// at most 0.7 (ftl/rmap.rs).
    pub fn rmap_slots(&self) -> u64 {
        let u = self.user_units as u64;
        u + u * 3 / 7 + 64
    }
    /// Bytes the FTL's maps will take (L2P, unit lengths, reverse map, valid bitmap).
    pub fn map_bytes(&self) -> u64 {
        let (lens, rmap) = if self.chunks_per_unit > 1 {
            (self.user_units as u64, self.rmap_slots() * 8)
        } else {
            (0, self.total_chunks() * 4)
        };
        self.user_units as u64 * 4 + lens + rmap + self.total_chunks() / 8
    }

    /// A bare FTL for WAF experiments: one die, one plane, 4 KiB pages, `blocks` blocks of
    /// `pages` pages, `user_units` logical pages. Timing values are nominal.
    pub fn small(
        blocks: u32,
        pages: u32,
        user_units: u32,
        policy: Policy,
        gc_reserve: u32,
    ) -> SsdConfig {
        let mut c = resolve_ssd(DEFAULT_PRESET, &[]).expect("default preset");
        c.channels = 1;
        c.dies = 1;
        c.planes = 1;
        c.page_bytes = UNIT as u32;
        c.pages_per_block = pages;
        c.chunks_per_unit = 1;
        c.chunks_per_page = 1;
        c.chunks_per_prog = 1;
        c.cpb = pages;
        c.n_blocks = blocks;
        c.n_slc = 0;
        c.slc_cpb = 0;
        c.user_units = user_units;
        c.policy = policy;
        c.gc_reserve = gc_reserve;
        (c.bg_gc, c.compression) = (false, false);
        c.buffer_units = 64;
        c.pace = 0.0;
        (c.gc_start, c.gc_slice, c.gc_copy_ns) = (0.0, 1, 0);
        (c.gc_switch_ns, c.gc_switch_every) = (0, 1);
        (c.queue_slots, c.gc_choices) = (0, 0);
        c.bg_period_ns = 0;
        c.gc_pass_period_ns = 0;
        c.gc_pace_victims = 0;
        c.overrides = vec![("custom".into(), "small".into())];
        c
    }
}

#[derive(Clone, Debug)]
pub struct HddConfig {
    pub preset: String,
    pub params: Vec<(String, String)>,
    pub overrides: Vec<(String, String)>,
    pub capacity: u64,
    pub rpm: f64,
    pub track_seek_ns: f64,
    pub full_seek_ns: f64,
    pub seek_knee: f64,
    pub outer_mbps: f64,
    pub inner_mbps: f64,
    pub cache_units: u32,
    pub ncq: u32,
    /// Command aging: the share of a host command's wait taken off its positioning time
    /// when the next command is chosen (0: shortest positioning time alone).
    pub age_weight: f64,
    pub overhead_ns: u64,
    pub time_spread: f64,
    pub link_mbps: f64,
    pub link: String,
}

#[allow(clippy::large_enum_variant)] // resolved once per drive: boxing buys nothing
#[derive(Clone, Debug)]
pub enum DriveConfig {
    Ssd(SsdConfig),
    Hdd(HddConfig),
}

impl DriveConfig {
    pub fn preset(&self) -> &str {
        match self {
            DriveConfig::Ssd(c) => &c.preset,
            DriveConfig::Hdd(c) => &c.preset,
        }
    }
    pub fn params(&self) -> &[(String, String)] {
        match self {
            DriveConfig::Ssd(c) => &c.params,
            DriveConfig::Hdd(c) => &c.params,
        }
    }
    pub fn overrides(&self) -> &[(String, String)] {
        match self {
            DriveConfig::Ssd(c) => &c.overrides,
            DriveConfig::Hdd(c) => &c.overrides,
        }
    }
}

/// Every preset with its parameters (values, units, help), for `iolab sim presets`.
pub fn presets_json() -> Result<Value, String> {
    let mut list = Vec::new();
    for p in PRESETS {
        let defs = if p.kind == Kind::Ssd {
            SSD_PARAMS
        } else {
            HDD_PARAMS
        };
        let values = p.resolved_values()?;
        let params: Vec<Value> = defs
            .iter()
            .map(|d| {
                let value = values.iter().find(|(k, _)| *k == d.name).map(|(_, v)| *v).unwrap_or("");
                json!({"name": d.name, "value": value, "unit": d.unit, "help": d.help, "choices": d.choices})
            })
            .collect();
        list.push(json!({
            "name": p.name,
            "kind": if p.kind == Kind::Ssd { "ssd" } else { "hdd" },
            "title": p.title,
            "default": p.name == DEFAULT_PRESET,
            "rated_pe_cycles": p.endurance.map(|e| e.pe_cycles),
            "warranty_years": p.endurance.map(|e| e.warranty_years),
            "calibrated_to": p.calibrated_to,
            "params": params,
        }));
    }
    Ok(Value::Array(list))
}

/// Facts about a resolved drive, without building it (no big allocations).
pub fn describe(cfg: &DriveConfig) -> Value {
    match cfg {
        DriveConfig::Ssd(c) => json!({
            "kind": "ssd",
            "preset": c.preset,
            "capacity_bytes": c.user_bytes(),
            "physical_bytes": c.physical_bytes(),
            "op": c.op(),
            "op_for_gc": c.op_for_gc(),
            "spare_factor": c.spare_factor(),
            "ftl_block_bytes": c.cpb as u64 * c.chunk_bytes(),
            "ftl_blocks": c.n_blocks,
            "slc_blocks": c.n_slc,
            "dies": c.dies,
            "memory_bytes": c.map_bytes(),
            "interface": if c.link.starts_with("pcie") { "nvme" } else if c.link.starts_with("sas") { "sas" } else { "sata" },
            "link": c.link,
            "link_mbps": c.link_mbps,
            "gc": c.policy.name(),
            "compression": c.compression,
            "buffer_bytes": c.buffer_units as u64 * UNIT,
            "plp": c.plp,
            "rated_pe_cycles": endurance(&c.preset).map(|e| e.pe_cycles),
            "warranty_years": endurance(&c.preset).map(|e| e.warranty_years),
            "params": c.params.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        }),
        DriveConfig::Hdd(c) => json!({
            "kind": "hdd",
            "preset": c.preset,
            "capacity_bytes": c.capacity,
            "rpm": c.rpm,
            "cache_bytes": c.cache_units as u64 * 4096,
            "interface": if c.link.starts_with("sas") { "sas" } else { "sata" },
            "link": c.link,
            "params": c.params.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::resolve::MIN_SCALED_BLOCKS;
    use super::*;

    /// Overrides from string pairs (config's tests, acts.rs's too).
    pub(super) fn ov(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn default_preset_is_400_on_512() {
        let c = resolve_ssd(DEFAULT_PRESET, &[]).unwrap();
        assert!((c.user_bytes() as f64 / 1e9 - 400.0).abs() < 0.01);
        assert!(
            (c.physical_bytes() as f64 / 1e9 - 512.0).abs() < 0.1,
            "{}",
            c.physical_bytes()
        );
        assert!((c.op() - 0.28).abs() < 0.002, "{}", c.op());
    }

    #[test]
    fn all_presets_resolve() {
        for p in PRESETS {
            resolve(p.name, &[]).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
    }

    #[test]
    fn every_ssd_preset_states_its_endurance_and_calibration() {
        for p in PRESETS {
            // An SSD's headline is what it is calibrated to; an HDD's is its own parameters.
            assert_eq!(
                p.calibrated_to.is_some_and(|c| !c.is_empty()),
                p.kind == Kind::Ssd,
                "{}: calibrated_to",
                p.name
            );
            match (p.kind, p.endurance) {
                (Kind::Ssd, Some(e)) => assert!(
                    e.pe_cycles > 0 && e.warranty_years > 0.0,
                    "{}: {e:?}",
                    p.name
                ),
                (Kind::Ssd, None) => panic!("SSD preset {} has no rated endurance", p.name),
                (Kind::Hdd, e) => assert_eq!(e, None, "{}: an HDD has no flash", p.name),
            }
            let facts = describe(&resolve(p.name, &[]).unwrap());
            assert_eq!(
                facts["rated_pe_cycles"].as_u64().is_some(),
                p.kind == Kind::Ssd,
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn errors_name_the_parameter() {
        let e = resolve("nope", &[]).unwrap_err();
        assert!(e.contains("nope") && e.contains("enterprise-sas"), "{e}");
        let e = resolve(DEFAULT_PRESET, &ov(&[("dies_per_channel", "0")])).unwrap_err();
        assert!(e.contains("dies_per_channel"), "{e}");
        let e = resolve(DEFAULT_PRESET, &ov(&[("user_gb", "-5")])).unwrap_err();
        assert!(e.contains("user_gb"), "{e}");
        let e = resolve(DEFAULT_PRESET, &ov(&[("op", "0.0001")])).unwrap_err();
        assert!(e.contains("gc_reserve") && e.contains("op"), "{e}");
        let e = resolve(DEFAULT_PRESET, &ov(&[("gc", "lru")])).unwrap_err();
        assert!(e.contains("gc") && e.contains("greedy"), "{e}");
        let e = resolve(DEFAULT_PRESET, &ov(&[("colour", "red")])).unwrap_err();
        assert!(e.contains("colour"), "{e}");
        let e = resolve(
            "entry-sata-compress",
            &ov(&[("op", "0.07"), ("compress_ceiling", "1.15")]),
        )
        .unwrap_err();
        assert!(e.contains("compress_ceiling=1.15"), "{e}");
        let e = resolve(DEFAULT_PRESET, &ov(&[("compress_ceiling", "0.9")])).unwrap_err();
        assert!(e.contains("compress_ceiling"), "{e}");
        let e = resolve("sas-15k-hdd", &ov(&[("rpm", "0")])).unwrap_err();
        assert!(e.contains("rpm"), "{e}");
    }

    #[test]
    fn user_gb_scales_the_flash_and_keeps_the_over_provisioning() {
        for (preset, gb) in [
            ("entry-sata-compress", "50"),
            (DEFAULT_PRESET, "1"),
            ("client-nvme-slc", "0.5"),
        ] {
            let stock = resolve_ssd(preset, &[]).unwrap();
            let c = resolve_ssd(preset, &ov(&[("user_gb", gb)])).unwrap();
            let want = gb.parse::<f64>().unwrap();
            assert!(
                (c.user_bytes() as f64 / 1e9 / want - 1.0).abs() < 1e-4,
                "{preset}: {}",
                c.user_bytes()
            );
            assert!(
                (c.op() / stock.op() - 1.0).abs() < 0.02,
                "{preset} user_gb={gb}: OP {:.4}, preset {:.4}",
                c.op(),
                stock.op()
            );
            assert!(c.n_blocks as f64 >= MIN_SCALED_BLOCKS.min(stock.n_blocks as f64));
            assert_eq!(c.n_slc > 0, stock.n_slc > 0, "{preset}: SLC cache kept");
            assert_eq!(c.overrides, ov(&[("user_gb", gb)]));
        }
        // op with user_gb sizes the flash for that OP; blocks_per_plane keeps the flash as given.
        let c = resolve_ssd(DEFAULT_PRESET, &ov(&[("user_gb", "2"), ("op", "0.07")])).unwrap();
        assert!((c.op() - 0.07).abs() < 0.005, "{}", c.op());
        let c = resolve_ssd(
            DEFAULT_PRESET,
            &ov(&[
                ("user_gb", "0.2"),
                ("blocks_per_plane", "64"),
                ("pages_per_block", "16"),
            ]),
        )
        .unwrap();
        assert!(c.op() > 1.5, "{}", c.op());
        let e = resolve_ssd(
            DEFAULT_PRESET,
            &ov(&[("user_gb", "2"), ("op", "0.1"), ("blocks_per_plane", "64")]),
        )
        .unwrap_err();
        assert!(e.contains("over-determine"), "{e}");
    }

    #[test]
    fn op_sets_user_capacity() {
        let c = resolve_ssd(DEFAULT_PRESET, &ov(&[("op", "0.07")])).unwrap();
        assert!((c.op() - 0.07).abs() < 1e-6);
    }
}
