//! From a preset and the user's overrides to a checked drive configuration: merging,
//! parsing each value (errors name the parameter), sizing a drive by `user_gb`, and the
//! derived geometry.

use super::acts::check_ssd;
use super::geometry::{flash_geometry, user_units, Geometry};
use super::vals::{shown, Vals};
use super::*;

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

pub(super) fn find_preset(name: &str) -> Result<&'static Preset, String> {
    PRESETS.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        format!("sim preset {name:?} is unknown; choose one of: {} (list them with `iolab sim presets`)", names.join(", "))
    })
}

/// Preset values with the user's overrides applied, checked for unknown names and bad words.
pub(super) fn merged(
    preset: &Preset,
    overrides: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let defs = if preset.kind == Kind::Ssd {
        SSD_PARAMS
    } else {
        HDD_PARAMS
    };
    let mut vals: Vec<(String, String)> = preset
        .resolved_values()?
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

/// A drive sized by `user_gb` has at least this many FTL blocks: fewer, longer blocks than
/// the preset's when needed, so garbage collection still has blocks to choose from.
pub(super) const MIN_SCALED_BLOCKS: f64 = 128.0;

/// Resolve an SSD. When the user gives `user_gb` but not `blocks_per_plane`, the flash is
/// sized with the capacity: over-provisioning stays the preset's (or `op`, when given), and
/// the SLC cache scales too. Without this, a smaller `user_gb` would keep all the flash and
/// give the drive far more spare area than the preset it copies.
/// A parameter the user gives where it cannot act is refused (acts.rs).
pub fn resolve_ssd(preset: &str, overrides: &[(String, String)]) -> Result<SsdConfig, String> {
    let cfg = resolve_sized(preset, overrides)?;
    check_ssd(&cfg, overrides)?;
    Ok(cfg)
}

fn resolve_sized(preset: &str, overrides: &[(String, String)]) -> Result<SsdConfig, String> {
    let gave = |n: &str| overrides.iter().any(|(k, _)| k == n);
    if !gave("user_gb") || gave("blocks_per_plane") {
        return resolve_ssd_exact(preset, overrides);
    }
    let scaled = scaled_overrides(preset, overrides)?;
    if scaled == overrides {
        return resolve_ssd_exact(preset, overrides); // user_gb or op not a number: named as given
    }
    // what fails now fails in a value derived from user_gb (blocks_per_plane, pages_per_block…):
    // the refusal says so, or it names a parameter the user never gave
    let mut cfg = resolve_ssd_exact(preset, &scaled).map_err(|e| {
        let given: Vec<String> = overrides
            .iter()
            .filter(|(k, _)| k == "user_gb" || k == "op")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        match smallest_user_gb(preset, overrides) {
            // a drive too small for the preset's flash: the geometry's own advice (lower
            // user_gb…) is for a drive of the preset's full flash, the wrong way here
            Some(gb) => format!(
                "sim parameter {}: too small for preset {preset}: its flash scaled down to this capacity leaves \
                 garbage collection too few spare blocks; the smallest user_gb it takes here is {gb}{}",
                given.join(" with "),
                spare_takers(overrides)
            ),
            None => format!(
                "sim parameter {}: the flash sized for this capacity is refused: {e}",
                given.join(" with ")
            ),
        }
    })?;
    cfg.overrides = overrides.to_vec();
    Ok(cfg)
}

/// The parameters given that take spare blocks as well as the capacity, named as another way
/// out of a drive too small: user_gb=8&slc_gb=0.5 on client-nvme-slc was told only of the
/// smallest user_gb, though the SLC cache the user asked for is what leaves too little spare.
fn spare_takers(overrides: &[(String, String)]) -> String {
    let given: Vec<String> = overrides
        .iter()
        .filter(|(k, _)| k == "slc_gb" || k == "gc_reserve")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if given.is_empty() {
        return String::new();
    }
    format!(
        ", or lower {}, which takes spare blocks at this capacity",
        given.join(" or ")
    )
}

/// The smallest user_gb above the one given that the preset takes with the other overrides
/// as given (two significant digits, rounded up), or None when no larger one up to 100,000
/// GB does (the refusal is then not about the size). Python asks it through
/// `smallest_size_gb` (mod.rs): a copy sized by an option (--capacity-limit) is refused in
/// that option's words.
pub(super) fn smallest_user_gb(preset: &str, overrides: &[(String, String)]) -> Option<f64> {
    smallest_above(overrides, "user_gb", |o| {
        scaled_overrides(preset, o)
            .and_then(|s| resolve_ssd_exact(preset, &s))
            .is_ok()
    })
}

/// The smallest value of the size parameter `size` above the one in `overrides` for which
/// `takes` holds, the other overrides as given (two significant digits, rounded up, where
/// that value is taken too); None when `size` is not given as a number, or no value up to
/// 100,000 GB is taken.
pub(super) fn smallest_above(
    overrides: &[(String, String)],
    size: &str,
    takes: impl Fn(&[(String, String)]) -> bool,
) -> Option<f64> {
    let given: f64 = overrides
        .iter()
        .find(|(k, _)| k == size)?
        .1
        .trim()
        .parse()
        .ok()?;
    let takes = |gb: f64| {
        let mut o: Vec<(String, String)> = overrides
            .iter()
            .filter(|(k, _)| k != size)
            .cloned()
            .collect();
        o.push((size.into(), format!("{gb}")));
        takes(&o)
    };
    if given.is_nan() || given <= 0.0 {
        return None; // doubling 0 (or NaN) never reaches a size: the search would not end
    }
    let (mut lo, mut hi) = (given, given * 2.0);
    while !takes(hi) {
        (lo, hi) = (hi, hi * 2.0);
        if hi > 1e5 {
            return None;
        }
    }
    while hi / lo > 1.001 {
        let mid = (lo * hi).sqrt();
        if takes(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let unit = 10f64.powf(hi.log10().floor() - 1.0);
    let round = (hi / unit).ceil() * unit;
    // 0.15, not 0.15000000000000002; written in two significant digits, not to the millionth,
    // which made a disk's 4.1e-6 GB 4e-6, a size it refuses
    let round: f64 = format!("{round:.1e}").parse().unwrap_or(round);
    Some(if takes(round) { round } else { hi })
}

fn scaled_overrides(
    preset: &str,
    overrides: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let get = |n: &str| {
        overrides.iter().find(|(k, _)| k == n).map(|(_, v)| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
        })
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
    let most = (u32::MAX - 2) as f64 * g.chunk_bytes() as f64; // the chunks the simulator addresses
    if user_gb * 1e9 * (1.0 + rho) > most {
        return Err(format!(
            "sim parameter user_gb={}: with over-provisioning {} it needs {} GB of flash, more than \
             the simulator addresses ({:.0} GB); give a smaller user_gb",
            shown(user_gb),
            shown(rho),
            shown((user_gb * (1.0 + rho)).round()),
            most / 1e9
        ));
    }
    let mut ppb = g.pages_per_block as f64;
    if !gave("pages_per_block") && stripes / ppb < MIN_SCALED_BLOCKS {
        ppb = (stripes / MIN_SCALED_BLOCKS).floor().max(1.0);
        // Shorter blocks keep the erase cost per page: a block erase amortised over fewer
        // pages would otherwise slow the small drive's steady state.
        if !gave("t_erase_us") {
            let t = g.t_erase_ns as f64 / 1000.0 * ppb / g.pages_per_block as f64;
            out.push(("t_erase_us".into(), format!("{t}")));
        }
        // And block-table checkpoints as often per page collected: shorter victims, more of
        // them between two checkpoints, so rare outliers stay as rare per write.
        if !gave("gc_switch_every") {
            let n = g.gc_switch_every as f64 * g.pages_per_block as f64 / ppb;
            out.push(("gc_switch_every".into(), format!("{}", n.round().max(1.0))));
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
    let geo = flash_geometry(&v)?;
    let gc_reserve = gc_reserve(&v)?;
    let user_units = user_units(&v, &geo, gc_reserve)?;
    let (link, link_mbps, link_full_duplex) = host_link(&v)?;
    let us = |k: &str| v.time_ns(k, 1e3, false);
    let us0 = |k: &str| v.time_ns(k, 1e3, true);
    let ms0 = |k: &str| v.time_ns(k, 1e6, true);
    Ok(SsdConfig {
        preset: preset.to_string(),
        params: vals.clone(),
        overrides: overrides.to_vec(),
        user_units,
        channels: geo.channels,
        dies: geo.dies,
        planes: geo.planes,
        pages_per_block: geo.pages_per_block,
        page_bytes: geo.page_bytes,
        t_read_ns: us("t_read_us")?,
        t_prog_ns: us("t_prog_us")?,
        t_erase_ns: us("t_erase_us")?,
        slc_t_read_ns: us("slc_read_us")?,
        slc_t_prog_ns: us("slc_prog_us")?,
        channel_mbps: v.rate("channel_mbps")?,
        link_mbps,
        link_full_duplex,
        link,
        overhead_ns: us0("overhead_us")?,
        write_path_ns: us0("write_path_us")?,
        write_core_ns: us0("write_core_us")?,
        cores: v.count_at_most("controller_cores", 64)?,
        queue_slots: whole0(&v, "queue_slots")?,
        core_by_lba: v.pct("core_by_lba_pct", 100.0)? / 100.0,
        spread: v.pct("time_spread_pct", 90.0)? / 100.0,
        read_retry: v.pct("read_retry_pct", 100.0)? / 100.0,
        read_skew: v.pct("read_page_skew_pct", 90.0)? / 100.0,
        gc_start: v.pct("gc_start_pct", 100.0)? / 100.0,
        gc_slice: v.count("gc_slice")?,
        gc_choices: whole0(&v, "gc_choices")?,
        gc_copy_ns: us0("gc_copy_us")?,
        gc_switch_ns: us0("gc_switch_us")?,
        gc_switch_every: v.count("gc_switch_every")? as u64,
        gc_pass_period_ns: ms0("gc_pass_period_ms")?,
        gc_pass_ns: gc_pass(&v)?,
        gc_pass_share: v.pct("gc_pass_pct", 100.0)? / 100.0,
        gc_pace_victims: whole0(&v, "gc_pace_victims")? as u32,
        bg_period_ns: ms0("bg_period_ms")?,
        bg_burst_ns: ms0("bg_burst_ms")?,
        compress_floor: compress_floor(&v)?,
        compress_ceiling: compress_ceiling(&v, &geo, user_units, gc_reserve)?,
        compress_limit: compress_limit(&v)?,
        // at most 1 GiB, a DRAM write buffer beyond any drive's
        buffer_units: (v.at_most("buffer_kib", 1_048_576.0, "1 GiB")? / 4.0).floor() as u32,
        pace: v.pct("pace_pct", 100.0)? / 100.0,
        plp: v.on("plp"),
        policy: policy(&v),
        gc_reserve,
        bg_gc: v.on("bg_gc"),
        striped: v.raw("die_alloc") == "striped",
        bg_reserve_pct: v.pct("bg_reserve_pct", 100.0)?,
        idle_ns: ms0("idle_ms")?,
        compression: geo.chunks_per_unit > 1,
        bits_per_cell: geo.bits_per_cell,
        chunks_per_unit: geo.chunks_per_unit,
        chunks_per_page: geo.chunks_per_page,
        chunks_per_prog: geo.chunks_per_prog,
        cpb: geo.cpb,
        n_blocks: geo.blocks_per_plane,
        n_slc: geo.n_slc,
        slc_cpb: geo.slc_cpb,
    })
}

/// The GC reserve, whose least is 2 (gc_reserve=1.5 was told "a whole number of at least 1").
fn gc_reserve(v: &Vals) -> Result<u32, String> {
    let x = v.num("gc_reserve")?;
    if x < 2.0 || x.fract() != 0.0 || x > u32::MAX as f64 {
        return Err(format!(
            "sim parameter gc_reserve={} must be a whole number of FTL blocks from 2 to {}",
            shown(x),
            u32::MAX
        ));
    }
    Ok(x as u32)
}

/// The link's name, its rate per direction (`link_mbps` when given, else the link's own) and
/// whether it is full duplex.
pub(super) fn host_link(v: &Vals) -> Result<(String, f64, bool), String> {
    let link = v.raw("link").to_string();
    let (mut mbps, full_duplex) = link_props(&link);
    if !v.raw("link_mbps").is_empty() {
        mbps = v.rate("link_mbps")?;
    }
    Ok((link, mbps, full_duplex))
}

fn policy(v: &Vals) -> Policy {
    match v.raw("gc") {
        "fifo" => Policy::Fifo,
        "cost-benefit" => Policy::CostBenefit,
        "random" => Policy::Random,
        _ => Policy::Greedy,
    }
}

fn whole0(v: &Vals, k: &str) -> Result<u16, String> {
    let x = v.nonneg(k)?;
    if x.fract() != 0.0 || x > u16::MAX as f64 {
        return Err(format!(
            "sim parameter {k}={} must be a whole number (0 = no limit)",
            shown(x)
        ));
    }
    Ok(x as u16)
}

/// A pass's length, within its period (a pass longer than the period would never end).
fn gc_pass(v: &Vals) -> Result<u64, String> {
    let (len, period) = (v.nonneg("gc_pass_ms")?, v.nonneg("gc_pass_period_ms")?);
    v.time_ns("gc_pass_ms", 1e6, true)?;
    if period > 0.0 && len > period {
        return Err(format!(
            "sim parameter gc_pass_ms={} must be at most gc_pass_period_ms={}",
            shown(len),
            shown(period)
        ));
    }
    Ok((len * 1e6).round() as u64)
}

fn compress_floor(v: &Vals) -> Result<f64, String> {
    let x = v.num("compress_floor")?;
    if !(0.25..=1.0).contains(&x) {
        return Err(format!(
            "sim parameter compress_floor={x} must be between 0.25 and 1"
        ));
    }
    Ok(x)
}

/// The ceiling, and room for the user's data stored at it beside the blocks GC needs free:
/// the nominal over-provisioning alone does not say whether incompressible data fits.
fn compress_ceiling(
    v: &Vals,
    geo: &Geometry,
    user_units: u32,
    gc_reserve: u32,
) -> Result<f64, String> {
    let x = v.num("compress_ceiling")?;
    if !(1.0..=1.5).contains(&x) {
        return Err(format!(
            "sim parameter compress_ceiling={x} must be between 1 and 1.5"
        ));
    }
    let stored = user_units as f64 * geo.chunks_per_unit as f64 * x;
    let room = (geo.blocks_per_plane - geo.n_slc) as f64 - (gc_reserve + 2) as f64;
    if geo.chunks_per_unit > 1 && stored > room * geo.cpb as f64 {
        return Err(format!(
            "sim parameter compress_ceiling={x}: incompressible user data would fill the flash outside the GC reserve; lower it or user_gb, or raise op"
        ));
    }
    Ok(x)
}

fn compress_limit(v: &Vals) -> Result<f64, String> {
    let x = v.num("compress_limit")?;
    if !(x > 0.0 && x <= 1.0) {
        return Err(format!(
            "sim parameter compress_limit={x} must be above 0 and at most 1"
        ));
    }
    Ok(x)
}
