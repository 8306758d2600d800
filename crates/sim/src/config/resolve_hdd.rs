//! An HDD preset and the user's overrides to a checked drive configuration (the SSD's is in
//! resolve.rs): each value parsed, an error naming the parameter.

use super::resolve::{find_preset, host_link, merged};
use super::vals::{shown, Vals, MAX_TIME_S};
use super::HddConfig;

pub fn resolve_hdd(preset: &str, overrides: &[(String, String)]) -> Result<HddConfig, String> {
    let p = find_preset(preset)?;
    let vals = merged(p, overrides)?;
    let v = Vals(&vals);
    let capacity = (v.pos("capacity_gb")? * 1e9) as u64 / 4096 * 4096;
    if capacity == 0 {
        return Err("sim parameter capacity_gb is below one 4 KiB block".into());
    }
    let track = v.time_ns("track_seek_ms", 1e6, false)? as f64;
    let full = v.time_ns("full_seek_ms", 1e6, false)? as f64;
    if full < track {
        return Err(format!(
            "sim parameter full_seek_ms={} is shorter than track_seek_ms={}",
            shown(full / 1e6),
            shown(track / 1e6)
        ));
    }
    let knee = v.pos("seek_knee")?;
    if knee >= 1.0 {
        return Err(format!(
            "sim parameter seek_knee={knee} must be between 0 and 1"
        ));
    }
    let outer = v.rate("outer_mbps")?;
    let inner = v.rate("inner_mbps")?;
    if inner > outer {
        return Err(format!(
            "sim parameter inner_mbps={inner} exceeds outer_mbps={outer} (outer tracks are longer)"
        ));
    }
    let (link, link_mbps, _) = host_link(&v)?;
    Ok(HddConfig {
        preset: preset.to_string(),
        params: vals.clone(),
        overrides: overrides.to_vec(),
        capacity,
        rpm: rpm(&v)?,
        track_seek_ns: track,
        full_seek_ns: full,
        seek_knee: knee,
        outer_mbps: outer,
        inner_mbps: inner,
        // at most 4 GiB, a cache beyond any drive's
        cache_units: (v.at_most("cache_mib", 4096.0, "4 GiB")? * 256.0) as u32,
        ncq: v.count("ncq")?,
        age_weight: v.pct("age_weight_pct", 100.0)? / 100.0,
        overhead_ns: v.time_ns("overhead_us", 1e3, true)?,
        time_spread: v.pct("time_spread_pct", 90.0)? / 100.0,
        link_mbps,
        link,
    })
}

/// The spindle speed: a revolution of at most `MAX_TIME_S` (rpm=1e-300 made every access wait
/// a revolution that never came: 0 IOPS, exit 0).
fn rpm(v: &Vals) -> Result<f64, String> {
    let rpm = v.pos("rpm")?;
    if 60.0 / rpm > MAX_TIME_S {
        return Err(format!(
            "sim parameter rpm={} must be at least {} (a revolution of at most an hour)",
            shown(rpm),
            shown(60.0 / MAX_TIME_S)
        ));
    }
    Ok(rpm)
}
