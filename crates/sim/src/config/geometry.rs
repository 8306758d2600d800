//! The flash's geometry and the user capacity it leaves, from a preset's merged values.

use super::vals::{shown, Vals};
use super::UNIT;

/// The flash's shape, checked: what the FTL addresses and how much it holds.
pub(super) struct Geometry {
    pub(super) channels: u32,
    pub(super) dies: u32,
    pub(super) planes: u32,
    pub(super) pages_per_block: u32,
    pub(super) page_bytes: u32,
    pub(super) blocks_per_plane: u32,
    pub(super) bits_per_cell: u32,
    pub(super) chunks_per_unit: u32,
    pub(super) chunks_per_page: u32,
    pub(super) chunks_per_prog: u32,
    pub(super) cpb: u32,
    pub(super) n_slc: u32,
    pub(super) slc_cpb: u32,
}

impl Geometry {
    pub(super) fn chunk_bytes(&self) -> u64 {
        UNIT / self.chunks_per_unit as u64
    }
    pub(super) fn physical_bytes(&self) -> u64 {
        self.cpb as u64 * self.blocks_per_plane as u64 * self.chunk_bytes()
    }
}

pub(super) fn flash_geometry(v: &Vals) -> Result<Geometry, String> {
    let channels = v.count("channels")?;
    let dies_per_channel = v.count("dies_per_channel")?;
    let planes = v.count("planes")?;
    let blocks_per_plane = v.count("blocks_per_plane")?;
    let pages_per_block = v.count("pages_per_block")?;
    let page_kib = v.pos("page_kib")?;
    if page_kib.fract() != 0.0 || !(page_kib as u64).is_multiple_of(4) {
        return Err(format!(
            "sim parameter page_kib={} must be a multiple of the 4 KiB mapping unit",
            shown(page_kib)
        ));
    }
    let g: u32 = if v.on("compression") { 4 } else { 1 };
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
        return Err(format!(
            "sim parameter slc_gb={}: the SLC cache would take all {blocks_per_plane} FTL blocks",
            shown(slc_gb)
        ));
    }
    Ok(Geometry {
        channels,
        dies,
        planes,
        pages_per_block,
        page_bytes: page_kib as u32 * 1024,
        blocks_per_plane,
        bits_per_cell,
        chunks_per_unit: g,
        chunks_per_page,
        chunks_per_prog,
        cpb,
        n_slc,
        slc_cpb,
    })
}

/// The user capacity in mapping units (from user_gb, or from op and the flash), checked to
/// leave the FTL its GC reserve and two more blocks outside the SLC cache.
pub(super) fn user_units(v: &Vals, geo: &Geometry, gc_reserve: u32) -> Result<u32, String> {
    let physical = geo.physical_bytes();
    // the parameter that set the capacity, as given: a refusal names it, not one never given
    let (user_bytes, given): (f64, String) = if v.raw("user_gb").is_empty() {
        if v.raw("op").is_empty() {
            return Err("sim parameters: give user_gb or op to set the user capacity".to_string());
        }
        // a value that was given is judged as given: "op=25%" is not "op missing"
        let op = v.num("op").map_err(|e| {
            format!("{e}: op is the spare flash over the user capacity as a fraction, (physical − user)/user, e.g. op=0.28")
        })?;
        if op <= 0.0 {
            return Err(format!(
                "sim parameter op={} must be greater than zero (rho = (physical − user)/user)",
                shown(op)
            ));
        }
        let user = physical as f64 / (1.0 + op);
        (
            user,
            format!(
                "op={}: the user capacity physical / (1 + op) = {} B",
                shown(op),
                shown(user.round())
            ),
        )
    } else {
        let gb = v.num("user_gb")?;
        if gb <= 0.0 {
            return Err(format!(
                "sim parameter user_gb={}: the user capacity must be greater than zero",
                shown(gb)
            ));
        }
        (
            gb * 1e9,
            format!("user_gb={}: {} B", shown(gb), shown((gb * 1e9).round())),
        )
    };
    let user_units64 = (user_bytes / UNIT as f64).floor() as u64;
    if user_units64 == 0 || user_units64 >= u32::MAX as u64 - 1 {
        return Err(format!(
            "sim parameter {given} is outside what the simulator maps (at least one {UNIT} B mapping unit, \
             fewer than {} of them)",
            u32::MAX as u64 - 1
        ));
    }
    let user_units = user_units64 as u32;
    let user_blocks = (user_units as u64 * geo.chunks_per_unit as u64).div_ceil(geo.cpb as u64);
    let spare_blocks = (geo.blocks_per_plane - geo.n_slc) as i64 - user_blocks as i64;
    if spare_blocks < gc_reserve as i64 + 2 {
        let op_now = (physical as f64 - user_bytes) / user_bytes;
        return Err(format!(
            "sim parameters op/user_gb: over-provisioning rho = {op_now:.4} leaves {spare_blocks} spare FTL blocks \
             ({} MB each) outside the SLC cache, below the GC reserve (gc_reserve={gc_reserve}) + 2 blocks the FTL \
             needs to keep writing; lower user_gb, raise op, lower gc_reserve or slc_gb",
            geo.cpb as u64 * geo.chunk_bytes() / 1_000_000
        ));
    }
    Ok(user_units)
}
