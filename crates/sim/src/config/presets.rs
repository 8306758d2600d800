//! The presets: the data a drive is made of (the parameters are in params.rs).

use super::Kind;

pub struct Preset {
    pub name: &'static str,
    pub kind: Kind,
    pub title: &'static str,
    /// The preset this one derives from (any preset of its kind, itself derived or not):
    /// `values` then holds only what differs from it, so a figure shared by several presets
    /// is written once. None for a root, which gives every parameter of its kind.
    pub base: Option<&'static str>,
    pub values: &'static [(&'static str, &'static str)],
    /// The flash's rated endurance, shown on the Endurance page (a drive's own rating
    /// replaces it there); every SSD preset states it, an HDD has none.
    pub endurance: Option<Endurance>,
    /// The published figures an SSD preset is calibrated to (docs/simulator.md, "Calibration
    /// targets"; tests/calibration checks them): the headline `iolab sim presets` shows. An
    /// HDD's headline is its own parameters, so it has none.
    pub calibrated_to: Option<&'static str>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Endurance {
    /// Rated program/erase cycles of the main flash.
    pub pe_cycles: u32,
    pub warranty_years: f64,
}

pub const DEFAULT_PRESET: &str = "enterprise-sas";

// The entry SATA drive's 30,000 P/E is its published rating; the others are iolab's figures
// for their class (enterprise MLC, client TLC), not a vendor's.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "enterprise-sas",
        kind: Kind::Ssd,
        title: "Enterprise SAS SSD, 400 GB user on 512 GB of MLC (rho = 0.28)",
        base: None,
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
            ("t_prog_us", "1150"),
            ("t_erase_us", "3500"),
            ("channel_mbps", "200"),
            ("link", "sas6"),
            ("link_mbps", ""),
            ("overhead_us", "40"),
            ("controller_cores", "4"),
            ("queue_slots", "64"),
            ("write_core_us", "45"),
            ("core_by_lba_pct", "100"),
            ("time_spread_pct", "10"),
            ("read_page_skew_pct", "30"),
            ("read_retry_pct", "0"),
            ("buffer_kib", "1024"),
            ("pace_pct", "0"),
            ("plp", "on"),
            ("gc", "greedy"),
            ("die_alloc", "least-busy"),
            ("gc_choices", "80"),
            ("gc_reserve", "2"),
            ("gc_start_pct", "60"),
            ("gc_slice", "16"),
            ("gc_copy_us", "1.5"),
            ("gc_switch_us", "380"),
            ("gc_switch_every", "64"),
            // UNVERIFIED mechanism (the review shows the dips, not their cause): a pass every
            // ~150 s lasting 30-40 s, as the reviewed drive's per-second IOPS dip.
            ("gc_pass_period_ms", "150000"),
            ("gc_pass_ms", "35000"),
            ("gc_pass_pct", "30"),
            // UNVERIFIED: firmware that paces GC by the average cost of its last 32 victims
            // holds the host's rate as steady as the review's between the dips.
            ("gc_pace_victims", "32"),
            ("bg_gc", "on"),
            ("bg_period_ms", "0"),
            ("bg_burst_ms", "0"),
            ("bg_reserve_pct", "5"),
            ("idle_ms", "5"),
            ("compression", "off"),
            ("compress_floor", "0.25"),
            ("compress_ceiling", "1"),
            ("compress_limit", "0.75"),
            ("slc_gb", "0"),
            ("bits_per_cell", "2"),
            ("slc_prog_us", "250"),
            ("slc_read_us", "30"),
            ("write_path_us", "0"),
        ],
        endurance: Some(Endurance {
            pe_cycles: 30_000,
            warranty_years: 5.0,
        }),
        calibrated_to: Some("4K RR 100k IOPS, 4K RW 42.5k IOPS steady, SEQ 500 MB/s"),
    },
    Preset {
        name: "entry-sata-compress",
        kind: Kind::Ssd,
        title: "Entry enterprise SATA SSD with a compressing controller, 100 GB on 128 GB of MLC",
        base: Some("enterprise-sas"),
        values: &[
            ("user_gb", "100"),
            ("dies_per_channel", "2"),
            ("blocks_per_plane", "1908"),
            // The fresh rate that fills the spare by the 11th WSAT minute, as the reviewed
            // drive falls; with the ceiling below it sets the steady 6,500-7,000 IOPS.
            ("t_prog_us", "1300"),
            ("t_erase_us", "3000"),
            ("channel_mbps", "166"),
            ("link", "sata3"),
            ("overhead_us", "42"),
            ("controller_cores", "2"),
            ("write_core_us", "0"),
            ("queue_slots", "0"),
            ("gc_choices", "0"),
            ("core_by_lba_pct", "0"),
            ("time_spread_pct", "15"),
            ("read_page_skew_pct", "0"),
            ("read_retry_pct", "0.1"),
            ("buffer_kib", "512"),
            ("pace_pct", "50"),
            ("gc_reserve", "3"),
            // GC starts a little before the reserve: right after a sequential fill its victims
            // are nearly full, and starting at the reserve left QD1 writes waiting for whole
            // collections (p99.9 3.5-8.7 ms on 0.5-2 GB copies).
            ("gc_start_pct", "10"),
            ("gc_slice", "1"),
            ("gc_copy_us", "4"),
            ("gc_switch_us", "0"),
            ("gc_pass_period_ms", "0"),
            // GC at each victim's own cost: this class's firmware lets IOPS swing with it
            ("gc_pace_victims", "0"),
            ("compression", "on"),
            // Headers and parity on incompressible data: 28 % of nominal spare leaves 11 %.
            ("compress_ceiling", "1.15"),
        ],
        endurance: Some(Endurance {
            pe_cycles: 30_000,
            warranty_years: 5.0,
        }),
        calibrated_to: Some("4K RW 6.5-7k IOPS steady (incompressible), 4K RR 47.8k IOPS"),
    },
    Preset {
        name: "client-nvme-slc",
        kind: Kind::Ssd,
        title: "Client NVMe TLC SSD with an 8 GB static SLC cache, 480 GB user",
        base: Some("enterprise-sas"),
        values: &[
            ("user_gb", "480"),
            ("planes", "4"),
            ("blocks_per_plane", "456"),
            ("pages_per_block", "576"),
            ("page_kib", "16"),
            ("t_read_us", "60"),
            ("t_prog_us", "1600"),
            ("t_erase_us", "5000"),
            ("channel_mbps", "800"),
            ("link", "pcie3x4"),
            ("overhead_us", "4"),
            ("write_core_us", "0"),
            ("queue_slots", "0"),
            ("gc_choices", "0"),
            ("core_by_lba_pct", "0"),
            ("time_spread_pct", "15"),
            ("read_page_skew_pct", "0"),
            ("read_retry_pct", "0.2"),
            ("buffer_kib", "4096"),
            ("plp", "off"),
            ("gc_reserve", "3"),
            ("gc_start_pct", "0"),
            ("gc_slice", "32"),
            ("gc_copy_us", "1"),
            ("gc_switch_us", "0"),
            ("gc_pass_period_ms", "0"),
            // GC at each victim's own cost: the IOPS after the cliff spread with it
            ("gc_pace_victims", "0"),
            ("bg_period_ms", "4300"),
            ("bg_burst_ms", "700"),
            ("bg_reserve_pct", "20"),
            ("slc_gb", "8"),
            ("bits_per_cell", "3"),
            ("slc_prog_us", "200"),
            ("write_path_us", "10"),
        ],
        endurance: Some(Endurance {
            pe_cycles: 3_000,
            warranty_years: 5.0,
        }),
        calibrated_to: Some("8 GB SLC cache; write IOPS after its cliff spread 2-10×"),
    },
    Preset {
        name: "sas-15k-hdd",
        kind: Kind::Hdd,
        title: "15,000 rpm SAS HDD, 147 GB",
        base: None,
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
            ("age_weight_pct", "0.5"),
            ("overhead_us", "30"),
            ("time_spread_pct", "25"),
            ("link", "sas6"),
            ("link_mbps", ""),
        ],
        endurance: None,
        calibrated_to: None,
    },
    Preset {
        name: "sata-7200-hdd",
        kind: Kind::Hdd,
        title: "7,200 rpm SATA HDD, 1 TB",
        base: Some("sas-15k-hdd"),
        values: &[
            ("capacity_gb", "1000"),
            ("rpm", "7200"),
            ("track_seek_ms", "0.8"),
            ("full_seek_ms", "16"),
            ("outer_mbps", "190"),
            ("inner_mbps", "90"),
            ("cache_mib", "64"),
            ("overhead_us", "50"),
            ("link", "sata3"),
        ],
        endurance: None,
        calibrated_to: None,
    },
];

/// The rated endurance of the preset named `preset`.
pub fn endurance(preset: &str) -> Option<Endurance> {
    PRESETS.iter().find(|p| p.name == preset)?.endurance
}

impl Preset {
    /// Every parameter's value: its root's, then each preset's own down the chain to this one.
    pub fn resolved_values(&self) -> Result<Vec<(&'static str, &'static str)>, String> {
        self.resolved_in(PRESETS)
    }

    /// As `resolved_values`, with the bases looked up in `table`. A base that is missing, of
    /// the other kind or the start of a cycle is refused, naming the chain.
    pub fn resolved_in(
        &self,
        table: &[Preset],
    ) -> Result<Vec<(&'static str, &'static str)>, String> {
        let mut chain = vec![self];
        while let Some(name) = chain[chain.len() - 1].base {
            let names = || {
                let v: Vec<&str> = chain.iter().map(|p| p.name).collect();
                format!("{} -> {name}", v.join(" -> "))
            };
            let base = table.iter().find(|p| p.name == name).ok_or_else(|| {
                format!(
                    "sim preset {}: its base {name:?} is not a preset ({})",
                    self.name,
                    names()
                )
            })?;
            if chain.iter().any(|p| p.name == name) {
                return Err(format!(
                    "sim preset {}: its bases form a cycle ({}); a chain of bases must end at a preset without one",
                    self.name,
                    names()
                ));
            }
            if base.kind != self.kind {
                return Err(format!(
                    "sim preset {}: its base {name:?} is a drive of another kind ({})",
                    self.name,
                    names()
                ));
            }
            chain.push(base);
        }
        let mut vals: Vec<(&'static str, &'static str)> = Vec::new();
        for p in chain.iter().rev() {
            for &(k, v) in p.values {
                match vals.iter_mut().find(|(name, _)| *name == k) {
                    Some(slot) => slot.1 = v,
                    None => vals.push((k, v)),
                }
            }
        }
        Ok(vals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{HDD_PARAMS, SSD_PARAMS};

    #[test]
    fn a_preset_states_only_what_differs_from_its_base() {
        for p in PRESETS {
            let defs = if p.kind == Kind::Ssd {
                SSD_PARAMS
            } else {
                HDD_PARAMS
            };
            let names: Vec<&str> = p.values.iter().map(|(k, _)| *k).collect();
            for (i, k) in names.iter().enumerate() {
                assert!(defs.iter().any(|d| d.name == *k), "{}: unknown {k}", p.name);
                assert!(!names[..i].contains(k), "{}: {k} twice", p.name);
            }
            let Some(base) = p.base else {
                let all: Vec<&str> = defs.iter().map(|d| d.name).collect();
                assert_eq!(
                    names, all,
                    "root preset {} gives every parameter in table order",
                    p.name
                );
                continue;
            };
            let base = PRESETS.iter().find(|b| b.name == base).unwrap();
            let inherited = base.resolved_values().unwrap();
            for (k, v) in p.values {
                assert!(
                    !inherited.contains(&(*k, *v)),
                    "{}: {k}={v} repeats its base {}",
                    p.name,
                    base.name
                );
            }
        }
    }

    const fn preset(
        name: &'static str,
        kind: Kind,
        base: Option<&'static str>,
        values: &'static [(&'static str, &'static str)],
    ) -> Preset {
        Preset {
            name,
            kind,
            title: "",
            base,
            values,
            endurance: None,
            calibrated_to: None,
        }
    }

    #[test]
    fn a_preset_derives_from_a_derived_preset() {
        let table = [
            preset(
                "root",
                Kind::Ssd,
                None,
                &[("a", "1"), ("b", "2"), ("c", "3")],
            ),
            preset("mid", Kind::Ssd, Some("root"), &[("b", "20")]),
            preset("leaf", Kind::Ssd, Some("mid"), &[("c", "30")]),
        ];
        assert_eq!(
            table[2].resolved_in(&table).unwrap(),
            [("a", "1"), ("b", "20"), ("c", "30")]
        );
    }

    #[test]
    fn a_cycle_of_bases_is_refused_naming_it() {
        let table = [
            preset("root", Kind::Ssd, None, &[("a", "1")]),
            preset("x", Kind::Ssd, Some("y"), &[]),
            preset("y", Kind::Ssd, Some("x"), &[]),
            preset("self", Kind::Ssd, Some("self"), &[]),
            preset("lost", Kind::Ssd, Some("nowhere"), &[]),
            preset("disk", Kind::Hdd, Some("root"), &[]),
        ];
        let e = table[1].resolved_in(&table).unwrap_err();
        assert!(e.contains("cycle (x -> y -> x)"), "{e}");
        let e = table[3].resolved_in(&table).unwrap_err();
        assert!(e.contains("cycle (self -> self)"), "{e}");
        let e = table[4].resolved_in(&table).unwrap_err();
        assert!(e.contains("\"nowhere\" is not a preset"), "{e}");
        let e = table[5].resolved_in(&table).unwrap_err();
        assert!(e.contains("another kind"), "{e}");
    }
}
