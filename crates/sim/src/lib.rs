//! iolab's simulated drives (SSD FTL, HDD) in virtual time. The Python surface is
//! deliberately narrow (see `src/iolab/_sim.pyi`): build a drive from a preset and
//! parameters, run a workload or replay a trace on it, purge, trim, idle, save and load.
//! Results come back as JSON, which iolab stores verbatim as the raw engine output.

mod arrow_stream;
pub mod config;
pub mod digest;
pub mod div;
mod drive;
pub mod driver;
pub mod flash;
pub mod ftl;
pub mod hdd;
mod held;
pub mod hist;
pub mod oracle;
pub mod ports;
mod python;
pub mod rng;
mod slots;
mod sorted;
mod source;
pub mod ssd;
pub mod state;
pub mod streams;
mod streams_cols;
mod streams_oio;
mod streams_py;
mod streams_seq;
mod streams_tab;
mod varied;
pub mod workload;

pub const ENGINE: &str = "iolab-sim";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub use drive::{result_json, Drive, Snapshot};
