//! Every preset's resolved configuration, compared with a recorded copy: a change to a preset
//! (or to how presets inherit from their base) that moves any resolved figure fails here.
//! After an intended change, rewrite the copy with `IOLAB_SIM_BLESS=1 cargo test --release
//! --lib golden` and review its diff. It is a unit test of the library, not a test target of
//! its own, so `cargo test` compiles and links it with the other unit tests, once.

use super::{presets_json, resolve, Kind, PRESETS};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/presets.txt");

fn dump() -> String {
    let mut out = String::new();
    // The stock preset and the shapes iolab's suites use most: a small drive, a given OP.
    let variants: &[&[(&str, &str)]] = &[&[], &[("user_gb", "4")], &[("op", "0.07")]];
    for p in PRESETS {
        // An HDD has no user_gb or op.
        let n = if p.kind == Kind::Ssd {
            variants.len()
        } else {
            1
        };
        for v in &variants[..n] {
            let ov: Vec<(String, String)> = v
                .iter()
                .map(|(k, x)| (k.to_string(), x.to_string()))
                .collect();
            out.push_str(&format!(
                "{} {:?}\n{:#?}\n\n",
                p.name,
                v,
                resolve(p.name, &ov)
            ));
        }
    }
    out.push_str(&serde_json::to_string_pretty(&presets_json().unwrap()).unwrap());
    out.push('\n');
    out
}

#[test]
fn resolved_presets_match_the_recorded_copy() {
    let now = dump();
    if std::env::var_os("IOLAB_SIM_BLESS").is_some() {
        std::fs::write(GOLDEN, &now).unwrap();
        return;
    }
    let want = std::fs::read_to_string(GOLDEN).expect("the recorded copy (bless it first)");
    if now != want {
        let line = now
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(now.lines().count().min(want.lines().count()));
        panic!(
            "resolved presets differ from {GOLDEN} from line {}: now {:?}, recorded {:?}",
            line + 1,
            now.lines().nth(line),
            want.lines().nth(line)
        );
    }
}
