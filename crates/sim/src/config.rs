//! Drive parameters, presets and their validation: the one source of truth for what a
//! simulated drive is. Python lists presets and describes targets through `presets_json`
//! and `resolve`, so names, units and defaults live only here.
//!
//! Conventions: capacities in decimal GB (10^9 B) as drives are sold; over-provisioning
//! ρ = (physical − user)/user; the spare factor (physical − user)/physical is reported too.
//! An FTL block is a superblock: one erase block from every plane of every die, written
//! stripe by stripe (one multi-plane page per die, then the next die).

use serde_json::{json, Value};

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

pub struct ParamDef {
    pub name: &'static str,
    pub unit: &'static str,
    pub help: &'static str,
    /// Allowed words for a choice parameter; empty for a number.
    pub choices: &'static [&'static str],
}

const fn p(name: &'static str, unit: &'static str, help: &'static str) -> ParamDef {
    ParamDef {
        name,
        unit,
        help,
        choices: &[],
    }
}
const fn c(name: &'static str, choices: &'static [&'static str], help: &'static str) -> ParamDef {
    ParamDef {
        name,
        unit: "",
        help,
        choices,
    }
}

const ON_OFF: &[&str] = &["on", "off"];
const LINKS: &[&str] = &["sata3", "sas6", "sas12", "pcie3x4", "pcie4x4"];

pub const SSD_PARAMS: &[ParamDef] = &[
    p("user_gb", "GB", "user (logical) capacity; give this or op"),
    p(
        "op",
        "ratio",
        "over-provisioning rho = (physical - user)/user; sets user capacity from the flash size",
    ),
    p("channels", "", "flash channels"),
    p("dies_per_channel", "", "dies on each channel"),
    p("planes", "", "planes per die (programmed together)"),
    p(
        "blocks_per_plane",
        "",
        "erase blocks per plane (= FTL superblocks)",
    ),
    p("pages_per_block", "", "pages per erase block"),
    p(
        "page_kib",
        "KiB",
        "flash page size (a multiple of the 4 KiB mapping unit)",
    ),
    p("t_read_us", "us", "page read time"),
    p("t_prog_us", "us", "page program time"),
    p("t_erase_us", "us", "block erase time"),
    p("channel_mbps", "MB/s", "transfer rate of one channel"),
    c("link", LINKS, "host link (sets link_mbps and duplex)"),
    p(
        "link_mbps",
        "MB/s",
        "host link bandwidth per direction (0 = from link)",
    ),
    p(
        "overhead_us",
        "us",
        "controller time per command on one core",
    ),
    p(
        "controller_cores",
        "",
        "controller cores processing commands in parallel (with the dies, channels and link they set the maximum IOPS)",
    ),
    p(
        "time_spread_pct",
        "%",
        "spread of every NAND read, program and erase time and of the controller time (triangular, +/- this share)",
    ),
    p(
        "read_retry_pct",
        "%",
        "share of page reads that need 1 to 4 read retries (each another page read)",
    ),
    p(
        "buffer_kib",
        "KiB",
        "write buffer (0 = write-through)",
    ),
    c(
        "plp",
        ON_OFF,
        "power-loss protection: the buffer is safe, so writes are acknowledged from it even with the write cache disabled",
    ),
    c(
        "gc",
        &["greedy", "fifo", "cost-benefit", "random"],
        "garbage-collection victim choice",
    ),
    p(
        "gc_reserve",
        "blocks",
        "free FTL blocks below which foreground GC runs (>= 2)",
    ),
    p(
        "gc_start_pct",
        "%",
        "foreground GC starts, gently, when the free spare blocks fall below this share of the spare area (full speed at gc_reserve)",
    ),
    p(
        "gc_slice",
        "copies",
        "foreground GC runs in slices of this many page copies between host commands",
    ),
    p(
        "gc_copy_us",
        "us",
        "controller time per GC copy: a slice holds every core",
    ),
    c("bg_gc", ON_OFF, "garbage collection while the host is idle"),
    p(
        "bg_period_ms",
        "ms",
        "background GC bursts while the host is busy, one per period (0 = only when idle)",
    ),
    p(
        "bg_burst_ms",
        "ms",
        "flash time one background GC burst occupies",
    ),
    p(
        "bg_reserve_pct",
        "%",
        "background GC keeps this share of the spare blocks free",
    ),
    p(
        "idle_ms",
        "ms",
        "host idle time before background work starts",
    ),
    c(
        "compression",
        ON_OFF,
        "compressing controller: flash writes shrink with data entropy",
    ),
    p(
        "compress_floor",
        "ratio",
        "stored share of a fully compressible unit (entropy 0; at least 0.25, one 1 KiB chunk)",
    ),
    p(
        "compress_limit",
        "entropy",
        "entropy from which the controller stores data uncompressed (the ratio curve flattens smoothly there)",
    ),
    p("slc_gb", "GB", "static SLC write cache (0 = none)"),
    p(
        "bits_per_cell",
        "bits",
        "bits per cell of the main flash (SLC blocks hold 1/bits as much)",
    ),
    p("slc_prog_us", "us", "SLC page program time"),
    p("slc_read_us", "us", "SLC page read time"),
];

pub const HDD_PARAMS: &[ParamDef] = &[
    p("capacity_gb", "GB", "capacity"),
    p("rpm", "rev/min", "spindle speed"),
    p("track_seek_ms", "ms", "track-to-track seek"),
    p("full_seek_ms", "ms", "full-stroke seek"),
    p(
        "seek_knee",
        "fraction",
        "seek distance (share of the stroke) where the curve turns from square-root to linear",
    ),
    p("outer_mbps", "MB/s", "media rate at the outer edge (LBA 0)"),
    p("inner_mbps", "MB/s", "media rate at the inner edge"),
    p(
        "cache_mib",
        "MiB",
        "read cache (recently transferred data is served without media access)",
    ),
    p("ncq", "", "commands the drive reorders (1 = in order)"),
    p("overhead_us", "us", "command overhead"),
    c("link", LINKS, "host link"),
    p("link_mbps", "MB/s", "host link bandwidth (unset: from link)"),
];

pub struct Preset {
    pub name: &'static str,
    pub kind: Kind,
    pub title: &'static str,
    pub values: &'static [(&'static str, &'static str)],
}

pub const DEFAULT_PRESET: &str = "enterprise-sas";

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "enterprise-sas",
        kind: Kind::Ssd,
        title: "Enterprise SAS SSD, 400 GB user on 512 GB of MLC (rho = 0.28)",
        values: &[
            ("user_gb", "400"),
            ("op", ""),
            ("channels", "8"),
            ("dies_per_channel", "4"),
            ("planes", "2"),
            ("blocks_per_plane", "3815"),
            ("pages_per_block", "256"),
            ("page_kib", "8"),
            ("t_read_us", "50"),
            ("t_prog_us", "1050"),
            ("t_erase_us", "3500"),
            ("channel_mbps", "200"),
            ("link", "sas6"),
            ("link_mbps", ""),
            ("overhead_us", "40"),
            ("controller_cores", "4"),
            ("time_spread_pct", "10"),
            ("read_retry_pct", "0.05"),
            ("buffer_kib", "1024"),
            ("plp", "on"),
            ("gc", "greedy"),
            ("gc_reserve", "2"),
            ("gc_start_pct", "60"),
            ("gc_slice", "8"),
            ("gc_copy_us", "2"),
            ("bg_gc", "on"),
            ("bg_period_ms", "0"),
            ("bg_burst_ms", "0"),
            ("bg_reserve_pct", "5"),
            ("idle_ms", "5"),
            ("compression", "off"),
            ("compress_floor", "0.25"),
            ("compress_limit", "0.75"),
            ("slc_gb", "0"),
            ("bits_per_cell", "2"),
            ("slc_prog_us", "250"),
            ("slc_read_us", "30"),
        ],
    },
    Preset {
        name: "entry-sata-compress",
        kind: Kind::Ssd,
        title: "Entry enterprise SATA SSD with a compressing controller, 100 GB on 128 GB of MLC",
        values: &[
            ("user_gb", "100"),
            ("op", ""),
            ("channels", "8"),
            ("dies_per_channel", "2"),
            ("planes", "2"),
            ("blocks_per_plane", "1908"),
            ("pages_per_block", "256"),
            ("page_kib", "8"),
            ("t_read_us", "50"),
            ("t_prog_us", "3200"),
            ("t_erase_us", "3000"),
            ("channel_mbps", "166"),
            ("link", "sata3"),
            ("link_mbps", ""),
            ("overhead_us", "42"),
            ("controller_cores", "2"),
            ("time_spread_pct", "15"),
            ("read_retry_pct", "0.1"),
            ("buffer_kib", "512"),
            ("plp", "on"),
            ("gc", "greedy"),
            ("gc_reserve", "2"),
            ("gc_start_pct", "0"),
            ("gc_slice", "16"),
            ("gc_copy_us", "4"),
            ("bg_gc", "on"),
            ("bg_period_ms", "0"),
            ("bg_burst_ms", "0"),
            ("bg_reserve_pct", "5"),
            ("idle_ms", "5"),
            ("compression", "on"),
            ("compress_floor", "0.25"),
            ("compress_limit", "0.75"),
            ("slc_gb", "0"),
            ("bits_per_cell", "2"),
            ("slc_prog_us", "250"),
            ("slc_read_us", "30"),
        ],
    },
    Preset {
        name: "client-nvme-slc",
        kind: Kind::Ssd,
        title: "Client NVMe TLC SSD with an 8 GB static SLC cache, 480 GB user",
        values: &[
            ("user_gb", "480"),
            ("op", ""),
            ("channels", "8"),
            ("dies_per_channel", "4"),
            ("planes", "4"),
            ("blocks_per_plane", "456"),
            ("pages_per_block", "576"),
            ("page_kib", "16"),
            ("t_read_us", "60"),
            ("t_prog_us", "1600"),
            ("t_erase_us", "5000"),
            ("channel_mbps", "800"),
            ("link", "pcie3x4"),
            ("link_mbps", ""),
            ("overhead_us", "4"),
            ("controller_cores", "4"),
            ("time_spread_pct", "15"),
            ("read_retry_pct", "0.2"),
            ("buffer_kib", "4096"),
            ("plp", "off"),
            ("gc", "greedy"),
            ("gc_reserve", "2"),
            ("gc_start_pct", "0"),
            ("gc_slice", "32"),
            ("gc_copy_us", "1"),
            ("bg_gc", "on"),
            ("bg_period_ms", "5000"),
            ("bg_burst_ms", "700"),
            ("bg_reserve_pct", "20"),
            ("idle_ms", "5"),
            ("compression", "off"),
            ("compress_floor", "0.25"),
            ("compress_limit", "0.75"),
            ("slc_gb", "8"),
            ("bits_per_cell", "3"),
            ("slc_prog_us", "200"),
            ("slc_read_us", "30"),
        ],
    },
    Preset {
        name: "sas-15k-hdd",
        kind: Kind::Hdd,
        title: "15,000 rpm SAS HDD, 147 GB",
        values: &[
            ("capacity_gb", "147"),
            ("rpm", "15000"),
            ("track_seek_ms", "0.2"),
            ("full_seek_ms", "7"),
            ("seek_knee", "0.3"),
            ("outer_mbps", "200"),
            ("inner_mbps", "120"),
            ("cache_mib", "16"),
            ("ncq", "32"),
            ("overhead_us", "30"),
            ("link", "sas6"),
            ("link_mbps", ""),
        ],
    },
    Preset {
        name: "sata-7200-hdd",
        kind: Kind::Hdd,
        title: "7,200 rpm SATA HDD, 1 TB",
        values: &[
            ("capacity_gb", "1000"),
            ("rpm", "7200"),
            ("track_seek_ms", "0.8"),
            ("full_seek_ms", "16"),
            ("seek_knee", "0.3"),
            ("outer_mbps", "190"),
            ("inner_mbps", "90"),
            ("cache_mib", "64"),
            ("ncq", "32"),
            ("overhead_us", "50"),
            ("link", "sata3"),
            ("link_mbps", ""),
        ],
    },
];

/// (MB/s per direction, full duplex)
fn link_props(name: &str) -> (f64, bool) {
    match name {
        "sata3" => (550.0, false),
        "sas6" => (550.0, true),
        "sas12" => (1100.0, true),
        "pcie3x4" => (3500.0, true),
        _ => (7000.0, true), // pcie4x4
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
    pub cores: u32,
    /// Half-width of the triangular spread of NAND and controller times, as a share.
    pub spread: f64,
    pub read_retry: f64,
    pub gc_start: f64,
    pub gc_slice: u32,
    pub gc_copy_ns: u64,
    pub bg_period_ns: u64,
    pub bg_burst_ns: u64,
    pub compress_floor: f64,
    pub compress_limit: f64,
    pub buffer_units: u32,
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
    pub fn spare_factor(&self) -> f64 {
        (self.physical_bytes() as f64 - self.user_bytes() as f64) / self.physical_bytes() as f64
    }
    pub fn total_chunks(&self) -> u64 {
        self.n_blocks as u64 * self.cpb as u64
    }
    /// Bytes the FTL's maps will take (L2P, unit lengths, P2L, valid bitmap).
    pub fn map_bytes(&self) -> u64 {
        let lens = if self.chunks_per_unit > 1 { self.user_units as u64 } else { 0 };
        self.user_units as u64 * 4 + lens + self.total_chunks() * 4 + self.total_chunks() / 8
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
        c.bg_gc = false;
        c.compression = false;
        c.buffer_units = 64;
        c.gc_start = 0.0;
        c.gc_slice = 1;
        c.gc_copy_ns = 0;
        c.bg_period_ns = 0;
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
    pub overhead_ns: u64,
    pub link_mbps: f64,
    pub link: String,
}

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

fn find_preset(name: &str) -> Result<&'static Preset, String> {
    PRESETS.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        format!("sim preset {name:?} is unknown; choose one of: {} (list them with `iolab sim presets`)", names.join(", "))
    })
}

/// Preset values with the user's overrides applied, checked for unknown names and bad words.
fn merged(
    preset: &Preset,
    overrides: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let defs = if preset.kind == Kind::Ssd {
        SSD_PARAMS
    } else {
        HDD_PARAMS
    };
    let mut vals: Vec<(String, String)> = preset
        .values
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in overrides {
        let Some(def) = defs.iter().find(|d| d.name == k) else {
            let names: Vec<&str> = defs.iter().map(|d| d.name).collect();
            return Err(format!(
                "sim parameter {k:?} is not a parameter of preset {:?}; valid parameters: {}",
                preset.name,
                names.join(", ")
            ));
        };
        let v = v.trim().to_lowercase();
        if !def.choices.is_empty() && !def.choices.contains(&v.as_str()) {
            return Err(format!(
                "sim parameter {k}={v:?}: choose one of {}",
                def.choices.join(", ")
            ));
        }
        if let Some(slot) = vals.iter_mut().find(|(name, _)| name == k) {
            slot.1 = v;
        } else {
            vals.push((k.clone(), v));
        }
    }
    // Giving op replaces the preset's user capacity. With user_gb as well, op sizes the
    // flash (see resolve_ssd), which the user must then not fix too.
    let gave = |n: &str| overrides.iter().any(|(k, _)| k == n);
    if preset.kind == Kind::Ssd && gave("op") {
        if gave("user_gb") {
            return Err(
                "sim parameters user_gb, op and blocks_per_plane over-determine the drive (user capacity, \
                 over-provisioning, flash size); give two of them"
                    .into(),
            );
        }
        for slot in vals.iter_mut() {
            if slot.0 == "user_gb" {
                slot.1 = String::new();
            }
        }
    }
    Ok(vals)
}

struct Vals<'a>(&'a [(String, String)]);

impl Vals<'_> {
    fn raw(&self, k: &str) -> &str {
        self.0
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }
    fn num(&self, k: &str) -> Result<f64, String> {
        let s = self.raw(k);
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("sim parameter {k}={s:?} is not a number"))
    }
    fn pos(&self, k: &str) -> Result<f64, String> {
        let v = self.num(k)?;
        if v <= 0.0 {
            return Err(format!("sim parameter {k}={v} must be greater than zero"));
        }
        Ok(v)
    }
    fn nonneg(&self, k: &str) -> Result<f64, String> {
        let v = self.num(k)?;
        if v < 0.0 {
            return Err(format!("sim parameter {k}={v} must not be negative"));
        }
        Ok(v)
    }
    fn count(&self, k: &str) -> Result<u32, String> {
        let v = self.num(k)?;
        if v < 1.0 || v.fract() != 0.0 || v > u32::MAX as f64 {
            return Err(format!(
                "sim parameter {k}={v} must be a whole number of at least 1"
            ));
        }
        Ok(v as u32)
    }
    fn on(&self, k: &str) -> bool {
        self.raw(k) == "on"
    }
}

pub fn resolve(preset: &str, overrides: &[(String, String)]) -> Result<DriveConfig, String> {
    let p = find_preset(preset)?;
    match p.kind {
        Kind::Ssd => resolve_ssd(preset, overrides).map(DriveConfig::Ssd),
        Kind::Hdd => resolve_hdd(preset, overrides).map(DriveConfig::Hdd),
    }
}

/// A drive sized by `user_gb` has at least this many FTL blocks: fewer, longer blocks than
/// the preset's when needed, so garbage collection still has blocks to choose from.
const MIN_SCALED_BLOCKS: f64 = 128.0;

/// Resolve an SSD. When the user gives `user_gb` but not `blocks_per_plane`, the flash is
/// sized with the capacity: over-provisioning stays the preset's (or `op`, when given), and
/// the SLC cache scales too. Without this, a smaller `user_gb` would keep all the flash and
/// give the drive far more spare area than the preset it copies.
pub fn resolve_ssd(preset: &str, overrides: &[(String, String)]) -> Result<SsdConfig, String> {
    let gave = |n: &str| overrides.iter().any(|(k, _)| k == n);
    if !gave("user_gb") || gave("blocks_per_plane") {
        return resolve_ssd_exact(preset, overrides);
    }
    let mut cfg = resolve_ssd_exact(preset, &scaled_overrides(preset, overrides)?)?;
    cfg.overrides = overrides.to_vec();
    Ok(cfg)
}

fn scaled_overrides(
    preset: &str,
    overrides: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let get = |n: &str| {
        overrides
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.trim().parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0))
    };
    let gave = |n: &str| overrides.iter().any(|(k, _)| k == n);
    let Some(Some(user_gb)) = get("user_gb") else {
        return Ok(overrides.to_vec()); // resolve_ssd_exact names the bad value
    };
    let stock = resolve_ssd_exact(preset, &[])?;
    let rho = match get("op") {
        None => stock.op(),
        Some(Some(op)) => op,
        Some(None) => return Ok(overrides.to_vec()),
    };
    // The user's geometry at this over-provisioning (user capacity from the flash).
    let mut out: Vec<(String, String)> = overrides
        .iter()
        .filter(|(k, _)| k != "user_gb" && k != "op")
        .cloned()
        .collect();
    out.push(("op".into(), format!("{rho}")));
    let g = resolve_ssd_exact(preset, &out)?;
    let stripe = g.chunks_per_prog as f64 * g.dies as f64 * g.chunk_bytes() as f64;
    let stripes = user_gb * 1e9 * (1.0 + rho) / stripe;
    let mut ppb = g.pages_per_block as f64;
    if !gave("pages_per_block") && stripes / ppb < MIN_SCALED_BLOCKS {
        ppb = (stripes / MIN_SCALED_BLOCKS).floor().max(1.0);
        // Shorter blocks keep the erase cost per page: a block erase amortised over fewer
        // pages would otherwise slow the small drive's steady state.
        if !gave("t_erase_us") {
            let t = g.t_erase_ns as f64 / 1000.0 * ppb / g.pages_per_block as f64;
            out.push(("t_erase_us".into(), format!("{t}")));
        }
    }
    let blocks = (stripes / ppb).round().max(1.0);
    out.retain(|(k, _)| k != "op" && k != "pages_per_block");
    out.push(("user_gb".into(), format!("{user_gb}")));
    out.push(("pages_per_block".into(), format!("{ppb}")));
    out.push(("blocks_per_plane".into(), format!("{blocks}")));
    if !gave("slc_gb") && stock.n_slc > 0 {
        let slc = Vals(&stock.params).num("slc_gb")? * user_gb * 1e9 / stock.user_bytes() as f64;
        out.push(("slc_gb".into(), format!("{slc}")));
    }
    Ok(out)
}

fn resolve_ssd_exact(preset: &str, overrides: &[(String, String)]) -> Result<SsdConfig, String> {
    let p = find_preset(preset)?;
    let vals = merged(p, overrides)?;
    let v = Vals(&vals);
    let channels = v.count("channels")?;
    let dies_per_channel = v.count("dies_per_channel")?;
    let planes = v.count("planes")?;
    let blocks_per_plane = v.count("blocks_per_plane")?;
    let pages_per_block = v.count("pages_per_block")?;
    let page_kib = v.pos("page_kib")?;
    if page_kib.fract() != 0.0 || (page_kib as u64) % 4 != 0 {
        return Err(format!(
            "sim parameter page_kib={page_kib} must be a multiple of the 4 KiB mapping unit"
        ));
    }
    let compression = v.on("compression");
    let g: u32 = if compression { 4 } else { 1 };
    let units_per_page = (page_kib as u32) / 4;
    let chunks_per_page = units_per_page * g;
    let chunks_per_prog = chunks_per_page * planes;
    let dies = channels
        .checked_mul(dies_per_channel)
        .ok_or("sim parameters channels × dies_per_channel overflow")?;
    let cpb64 = chunks_per_prog as u64 * dies as u64 * pages_per_block as u64;
    let total = cpb64 * blocks_per_plane as u64;
    if cpb64 > (u32::MAX / 4) as u64 || total >= u32::MAX as u64 - 1 {
        return Err(format!(
            "sim geometry: {:.0} GB of flash is more than the simulator addresses ({} mapping chunks of {} B at most); \
             lower blocks_per_plane or pages_per_block",
            total as f64 * (UNIT / g as u64) as f64 / 1e9,
            u32::MAX - 2,
            UNIT / g as u64
        ));
    }
    let cpb = cpb64 as u32;
    let chunk_bytes = UNIT / g as u64;
    let bits_per_cell = v.count("bits_per_cell")?;
    if bits_per_cell > 4 {
        return Err(format!(
            "sim parameter bits_per_cell={bits_per_cell} must be 1 to 4"
        ));
    }
    let slc_gb = v.nonneg("slc_gb")?;
    let (n_slc, slc_cpb) = if slc_gb > 0.0 {
        // An SLC-mode block stores 1/bits of the data, in whole stripes.
        let slc_cpb = (cpb / bits_per_cell / chunks_per_prog).max(1) * chunks_per_prog;
        let n = ((slc_gb * 1e9) / (slc_cpb as f64 * chunk_bytes as f64)).ceil() as u32;
        (n.max(1), slc_cpb)
    } else {
        (0, 0)
    };
    if n_slc >= blocks_per_plane {
        return Err(format!("sim parameter slc_gb={slc_gb}: the SLC cache would take all {blocks_per_plane} FTL blocks"));
    }
    let n_main = blocks_per_plane - n_slc;
    let physical = total * chunk_bytes;
    let user_bytes: f64 = if v.raw("user_gb").is_empty() {
        let op = v.num("op").map_err(|_| {
            "sim parameters: give user_gb or op to set the user capacity".to_string()
        })?;
        if op <= 0.0 {
            return Err(format!(
                "sim parameter op={op} must be greater than zero (rho = (physical − user)/user)"
            ));
        }
        physical as f64 / (1.0 + op)
    } else {
        let gb = v.num("user_gb")?;
        if gb <= 0.0 {
            return Err(format!(
                "sim parameter user_gb={gb}: the user capacity must be greater than zero"
            ));
        }
        gb * 1e9
    };
    let user_units64 = (user_bytes / UNIT as f64).floor() as u64;
    if user_units64 == 0 || user_units64 >= u32::MAX as u64 - 1 {
        return Err(format!(
            "sim parameter user_gb: {:.3} GB is outside what the simulator maps",
            user_bytes / 1e9
        ));
    }
    let user_units = user_units64 as u32;
    let gc_reserve = v.count("gc_reserve")?;
    if gc_reserve < 2 {
        return Err(format!(
            "sim parameter gc_reserve={gc_reserve} must be at least 2 FTL blocks"
        ));
    }
    let user_blocks = (user_units as u64 * g as u64).div_ceil(cpb as u64);
    let spare_blocks = n_main as i64 - user_blocks as i64;
    if spare_blocks < gc_reserve as i64 + 2 {
        let op_now = (physical as f64 - user_bytes) / user_bytes;
        return Err(format!(
            "sim parameters op/user_gb: over-provisioning rho = {op_now:.4} leaves {spare_blocks} spare FTL blocks \
             ({} MB each) outside the SLC cache, below the GC reserve (gc_reserve={gc_reserve}) + 2 blocks the FTL \
             needs to keep writing; lower user_gb, raise op, lower gc_reserve or slc_gb",
            cpb as u64 * chunk_bytes / 1_000_000
        ));
    }
    let link = v.raw("link").to_string();
    let (mut link_mbps, link_full_duplex) = link_props(&link);
    if !v.raw("link_mbps").is_empty() {
        link_mbps = v.pos("link_mbps")?;
    }
    let us = |k: &str| -> Result<u64, String> { Ok((v.pos(k)? * 1000.0).round() as u64) };
    Ok(SsdConfig {
        preset: preset.to_string(),
        params: vals.clone(),
        overrides: overrides.to_vec(),
        user_units,
        channels,
        dies,
        planes,
        pages_per_block,
        page_bytes: page_kib as u32 * 1024,
        t_read_ns: us("t_read_us")?,
        t_prog_ns: us("t_prog_us")?,
        t_erase_ns: us("t_erase_us")?,
        slc_t_read_ns: us("slc_read_us")?,
        slc_t_prog_ns: us("slc_prog_us")?,
        channel_mbps: v.pos("channel_mbps")?,
        link_mbps,
        link_full_duplex,
        link,
        overhead_ns: (v.nonneg("overhead_us")? * 1000.0).round() as u64,
        cores: {
            let n = v.count("controller_cores")?;
            if n > 64 {
                return Err(format!("sim parameter controller_cores={n} must be at most 64"));
            }
            n
        },
        spread: pct(&v, "time_spread_pct", 90.0)? / 100.0,
        read_retry: pct(&v, "read_retry_pct", 100.0)? / 100.0,
        gc_start: pct(&v, "gc_start_pct", 100.0)? / 100.0,
        gc_slice: v.count("gc_slice")?,
        gc_copy_ns: (v.nonneg("gc_copy_us")? * 1000.0).round() as u64,
        bg_period_ns: (v.nonneg("bg_period_ms")? * 1e6).round() as u64,
        bg_burst_ns: (v.nonneg("bg_burst_ms")? * 1e6).round() as u64,
        compress_floor: {
            let x = v.num("compress_floor")?;
            if !(0.25..=1.0).contains(&x) {
                return Err(format!("sim parameter compress_floor={x} must be between 0.25 and 1"));
            }
            x
        },
        compress_limit: {
            let x = v.num("compress_limit")?;
            if !(x > 0.0 && x <= 1.0) {
                return Err(format!("sim parameter compress_limit={x} must be above 0 and at most 1"));
            }
            x
        },
        buffer_units: (v.nonneg("buffer_kib")? / 4.0).floor() as u32,
        plp: v.on("plp"),
        policy: match v.raw("gc") {
            "fifo" => Policy::Fifo,
            "cost-benefit" => Policy::CostBenefit,
            "random" => Policy::Random,
            _ => Policy::Greedy,
        },
        gc_reserve,
        bg_gc: v.on("bg_gc"),
        bg_reserve_pct: {
            let x = v.nonneg("bg_reserve_pct")?;
            if x > 100.0 {
                return Err(format!(
                    "sim parameter bg_reserve_pct={x} must be at most 100"
                ));
            }
            x
        },
        idle_ns: (v.nonneg("idle_ms")? * 1e6).round() as u64,
        compression,
        bits_per_cell,
        chunks_per_unit: g,
        chunks_per_page,
        chunks_per_prog,
        cpb,
        n_blocks: blocks_per_plane,
        n_slc,
        slc_cpb,
    })
}

/// A percentage parameter between 0 and `max`.
fn pct(v: &Vals, k: &str, max: f64) -> Result<f64, String> {
    let x = v.nonneg(k)?;
    if x > max {
        return Err(format!("sim parameter {k}={x} must be at most {max}"));
    }
    Ok(x)
}

pub fn resolve_hdd(preset: &str, overrides: &[(String, String)]) -> Result<HddConfig, String> {
    let p = find_preset(preset)?;
    let vals = merged(p, overrides)?;
    let v = Vals(&vals);
    let capacity = (v.pos("capacity_gb")? * 1e9) as u64 / 4096 * 4096;
    if capacity == 0 {
        return Err("sim parameter capacity_gb is below one 4 KiB block".into());
    }
    let track = v.pos("track_seek_ms")?;
    let full = v.pos("full_seek_ms")?;
    if full < track {
        return Err(format!(
            "sim parameter full_seek_ms={full} is shorter than track_seek_ms={track}"
        ));
    }
    let knee = v.pos("seek_knee")?;
    if knee >= 1.0 {
        return Err(format!(
            "sim parameter seek_knee={knee} must be between 0 and 1"
        ));
    }
    let outer = v.pos("outer_mbps")?;
    let inner = v.pos("inner_mbps")?;
    if inner > outer {
        return Err(format!(
            "sim parameter inner_mbps={inner} exceeds outer_mbps={outer} (outer tracks are longer)"
        ));
    }
    let link = v.raw("link").to_string();
    let (mut link_mbps, _) = link_props(&link);
    if !v.raw("link_mbps").is_empty() {
        link_mbps = v.pos("link_mbps")?;
    }
    Ok(HddConfig {
        preset: preset.to_string(),
        params: vals.clone(),
        overrides: overrides.to_vec(),
        capacity,
        rpm: v.pos("rpm")?,
        track_seek_ns: track * 1e6,
        full_seek_ns: full * 1e6,
        seek_knee: knee,
        outer_mbps: outer,
        inner_mbps: inner,
        cache_units: (v.nonneg("cache_mib")? * 256.0) as u32,
        ncq: v.count("ncq")?,
        overhead_ns: (v.nonneg("overhead_us")? * 1000.0) as u64,
        link_mbps,
        link,
    })
}

/// Every preset with its parameters (values, units, help), for `iolab sim presets`.
pub fn presets_json() -> Value {
    let list: Vec<Value> = PRESETS
        .iter()
        .map(|p| {
            let defs = if p.kind == Kind::Ssd { SSD_PARAMS } else { HDD_PARAMS };
            let params: Vec<Value> = defs
                .iter()
                .map(|d| {
                    let value = p.values.iter().find(|(k, _)| *k == d.name).map(|(_, v)| *v).unwrap_or("");
                    json!({"name": d.name, "value": value, "unit": d.unit, "help": d.help, "choices": d.choices})
                })
                .collect();
            json!({
                "name": p.name,
                "kind": if p.kind == Kind::Ssd { "ssd" } else { "hdd" },
                "title": p.title,
                "default": p.name == DEFAULT_PRESET,
                "params": params,
            })
        })
        .collect();
    Value::Array(list)
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
    use super::*;

    fn ov(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
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
        let e = resolve("sas-15k-hdd", &ov(&[("rpm", "0")])).unwrap_err();
        assert!(e.contains("rpm"), "{e}");
    }

    #[test]
    fn user_gb_scales_the_flash_and_keeps_the_over_provisioning() {
        for (preset, gb) in [("entry-sata-compress", "50"), (DEFAULT_PRESET, "1"), ("client-nvme-slc", "0.5")] {
            let stock = resolve_ssd(preset, &[]).unwrap();
            let c = resolve_ssd(preset, &ov(&[("user_gb", gb)])).unwrap();
            let want = gb.parse::<f64>().unwrap();
            assert!((c.user_bytes() as f64 / 1e9 / want - 1.0).abs() < 1e-4, "{preset}: {}", c.user_bytes());
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
        let c = resolve_ssd(DEFAULT_PRESET, &ov(&[("user_gb", "0.2"), ("blocks_per_plane", "64"), ("pages_per_block", "16")])).unwrap();
        assert!(c.op() > 1.5, "{}", c.op());
        let e = resolve_ssd(DEFAULT_PRESET, &ov(&[("user_gb", "2"), ("op", "0.1"), ("blocks_per_plane", "64")])).unwrap_err();
        assert!(e.contains("over-determine"), "{e}");
    }

    #[test]
    fn op_sets_user_capacity() {
        let c = resolve_ssd(DEFAULT_PRESET, &ov(&[("op", "0.07")])).unwrap();
        assert!((c.op() - 0.07).abs() < 1e-6);
    }
}
