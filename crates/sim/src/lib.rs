//! iolab's simulated drives (SSD FTL, HDD) in virtual time. The Python surface is
//! deliberately narrow: see `src/iolab/_sim.pyi`.
use pyo3::prelude::*;

#[pymodule]
fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
