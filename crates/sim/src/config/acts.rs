//! Parameters that act only together with another: `compress_*` without compression, `gc_choices`
//! without greedy GC, a GC pass's length without a pass, `bg_burst_ms` without bursts... One set
//! by the user where it cannot act would be accepted and change nothing, and the figures of a run
//! would be taken for the drive it asked for; it is refused, naming the parameter that makes it
//! act. Only the user's own values are judged: a preset keeps values for mechanisms it has off
//! (client-nvme-slc's GC pass length with no pass), so that turning one on has sensible values.

use super::{Policy, SsdConfig};

struct Rule {
    params: &'static [&'static str],
    /// A value that asks for nothing of the mechanism (turns it off): accepted without it.
    inert: Option<&'static str>,
    acts: fn(&SsdConfig) -> bool,
    /// What makes the parameter act, and what this drive has instead.
    needs: &'static str,
    has: fn(&SsdConfig) -> String,
}

fn idle_work(c: &SsdConfig) -> bool {
    c.bg_gc || c.n_slc > 0
}

fn no_idle_work(_: &SsdConfig) -> String {
    "background GC is off (bg_gc=off) and the drive has no SLC cache to evict".into()
}

const RULES: &[Rule] = &[
    Rule {
        params: &["compress_floor", "compress_ceiling", "compress_limit"],
        inert: None,
        acts: |c| c.compression,
        needs: "compression=on",
        has: |_| "this drive does not compress (compression=off)".into(),
    },
    Rule {
        params: &["gc_choices"],
        inert: Some("0"),
        acts: |c| c.policy == Policy::Greedy,
        needs: "gc=greedy (the number of candidates greedy GC draws)",
        has: |c| format!("this drive's GC is gc={}", c.policy.name()),
    },
    Rule {
        params: &["gc_pass_ms", "gc_pass_pct"],
        inert: None,
        acts: |c| c.gc_pass_period_ns > 0,
        needs: "gc_pass_period_ms above 0 (a periodic GC pass)",
        has: |_| "gc_pass_period_ms is 0 (no GC pass)".into(),
    },
    Rule {
        params: &["gc_switch_every"],
        inert: None,
        acts: |c| c.gc_switch_ns > 0,
        needs: "gc_switch_us above 0 (the time a block-table checkpoint holds the controller)",
        has: |_| "gc_switch_us is 0 (a checkpoint costs nothing)".into(),
    },
    Rule {
        params: &["bg_period_ms"],
        inert: Some("0"),
        acts: idle_work,
        needs: "bg_gc=on or an SLC cache (slc_gb above 0), the work a burst does",
        has: no_idle_work,
    },
    Rule {
        params: &["bg_burst_ms"],
        inert: None,
        acts: |c| c.bg_period_ns > 0 && idle_work(c),
        needs:
            "bg_period_ms above 0 (periodic bursts) with bg_gc=on or an SLC cache (slc_gb above 0)",
        has: |c| {
            if c.bg_period_ns == 0 {
                "bg_period_ms is 0 (no bursts)".into()
            } else {
                no_idle_work(c)
            }
        },
    },
    Rule {
        params: &["bg_reserve_pct"],
        inert: None,
        acts: |c| c.bg_gc,
        needs: "bg_gc=on",
        has: |_| "background GC is off (bg_gc=off)".into(),
    },
    Rule {
        params: &["idle_ms"],
        inert: None,
        acts: idle_work,
        needs: "bg_gc=on or an SLC cache (slc_gb above 0), the work an idle host lets run",
        has: no_idle_work,
    },
    Rule {
        params: &["slc_prog_us", "slc_read_us", "bits_per_cell"],
        inert: None,
        acts: |c| c.n_slc > 0,
        needs: "an SLC cache (slc_gb above 0; bits_per_cell sets how much an SLC-mode block holds)",
        has: |_| "the drive has no SLC cache (slc_gb=0)".into(),
    },
    Rule {
        params: &["pace_pct"],
        inert: Some("0"),
        acts: |c| c.buffer_units > 0,
        needs: BUFFER,
        has: write_through,
    },
    Rule {
        params: &["plp"],
        inert: Some("off"),
        acts: |c| c.buffer_units > 0,
        needs: BUFFER,
        has: write_through,
    },
];

const BUFFER: &str = "a write buffer (buffer_kib of at least 4)";

fn write_through(_: &SsdConfig) -> String {
    "the drive has none (buffer_kib below 4, write-through)".into()
}

/// Whether `v`, as given, is `inert` (numbers by value: 0, 0.0 and 0e0 are one).
fn is_inert(v: &str, inert: Option<&str>) -> bool {
    let Some(i) = inert else { return false };
    let v = v.trim().to_lowercase();
    match (v.parse::<f64>(), i.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => v == i,
    }
}

/// The first of the user's `overrides` that cannot act on the drive `c`, as a refusal.
pub(super) fn check_ssd(c: &SsdConfig, overrides: &[(String, String)]) -> Result<(), String> {
    for (k, v) in overrides {
        let Some(rule) = RULES.iter().find(|r| r.params.contains(&k.as_str())) else {
            continue;
        };
        if !(rule.acts)(c) && !is_inert(v, rule.inert) {
            return Err(format!(
                "sim parameter {k}={v} acts only with {}, and {}: the drive would take {k} and \
                 change nothing. Give what makes it act as well, or leave {k} out.",
                rule.needs,
                (rule.has)(c)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{presets::PRESETS, resolve_ssd, tests::ov};
    use super::*;

    /// Every rule's parameters are SSD parameters (a misspelt one would never be judged).
    #[test]
    fn every_rule_names_a_parameter() {
        for r in RULES {
            for p in r.params {
                assert!(super::super::SSD_PARAMS.iter().any(|d| d.name == *p), "{p}");
            }
        }
    }

    #[test]
    fn a_parameter_that_cannot_act_is_refused_naming_what_would_make_it_act() {
        let cases = [
            (
                "enterprise-sas",
                &[("compress_floor", "0.5")][..],
                "compression=on",
            ),
            (
                "enterprise-sas",
                &[("gc", "fifo"), ("gc_choices", "8")][..],
                "gc=greedy",
            ),
            (
                "client-nvme-slc",
                &[("gc_pass_ms", "100")][..],
                "gc_pass_period_ms above 0",
            ),
            (
                "client-nvme-slc",
                &[("gc_switch_every", "8")][..],
                "gc_switch_us above 0",
            ),
            (
                "enterprise-sas",
                &[("bg_gc", "off"), ("bg_burst_ms", "10")][..],
                "bg_gc=on",
            ),
            (
                "enterprise-sas",
                &[("slc_prog_us", "150")][..],
                "slc_gb above 0",
            ),
            (
                "enterprise-sas",
                &[("buffer_kib", "0"), ("plp", "on")][..],
                "buffer_kib",
            ),
        ];
        for (preset, given, names) in cases {
            let e = resolve_ssd(preset, &ov(given)).unwrap_err();
            let (k, v) = given.last().unwrap();
            assert!(
                e.contains(&format!("{k}={v} acts only with")) && e.contains(names),
                "{e}"
            );
        }
    }

    /// Every preset loads as it is, with the values it keeps for mechanisms it has off; with
    /// a mechanism's enabler given, so do the parameters it enables; and a value that asks for
    /// nothing (gc_choices=0 under FIFO) is taken.
    #[test]
    fn presets_and_parameters_that_act_are_taken() {
        for p in PRESETS.iter().filter(|p| p.kind == super::super::Kind::Ssd) {
            resolve_ssd(p.name, &[]).unwrap();
        }
        for (preset, given) in [
            (
                "enterprise-sas",
                &[("compression", "on"), ("compress_floor", "0.5")][..],
            ),
            (
                "client-nvme-slc",
                &[("gc_pass_period_ms", "1000"), ("gc_pass_ms", "100")][..],
            ),
            (
                "enterprise-sas",
                &[("gc", "fifo"), ("gc_choices", "0.0")][..],
            ),
            (
                "enterprise-sas",
                &[("bg_gc", "off"), ("bg_period_ms", "0")][..],
            ),
        ] {
            resolve_ssd(preset, &ov(given)).unwrap_or_else(|e| panic!("{given:?}: {e}"));
        }
    }
}
