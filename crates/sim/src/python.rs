//! The Python surface (`iolab._sim`, typed in src/iolab/_sim.pyi).

// pyo3 0.22's #[pymethods]/#[pyfunction] expansion converts each returned PyErr into itself,
// which clippy flags in the generated wrappers of this module; the code written here does no
// such conversion.
#![allow(clippy::useless_conversion)]

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use serde_json::Value;

use crate::driver::{self, RunSpec, StreamSpec, Trace, NS};
use crate::{config, oracle, result_json, state, Drive, VERSION};

fn value_err(e: String) -> PyErr {
    PyValueError::new_err(e)
}

#[pyclass(name = "Drive", module = "iolab._sim")]
struct PyDrive {
    d: Drive,
}

/// Runs `f` without the GIL, calling the Python `progress(virtual_s, iops)` now and then
/// (with the GIL, so Ctrl-C is noticed there).
fn with_progress<F>(py: Python<'_>, progress: Option<PyObject>, f: F) -> PyResult<Value>
where
    F: FnOnce(driver::Progress) -> Result<Value, String> + Send,
{
    let mut pending: Option<PyErr> = None;
    let out = py.allow_threads(|| {
        let mut cb = |v: f64, iops: f64| -> bool {
            Python::with_gil(|py| {
                if let Err(e) = py.check_signals() {
                    pending = Some(e);
                    return false;
                }
                if let Some(p) = &progress {
                    if let Err(e) = p.call1(py, (v, iops)) {
                        pending = Some(e);
                        return false;
                    }
                }
                true
            })
        };
        f(&mut cb)
    });
    if let Some(e) = pending {
        return Err(e);
    }
    out.map_err(|e| {
        if e == "interrupted" {
            PyKeyboardInterrupt::new_err("interrupted")
        } else {
            value_err(e)
        }
    })
}

#[pymethods]
impl PyDrive {
    #[new]
    #[pyo3(signature = (preset, params = Vec::new()))]
    fn new(preset: &str, params: Vec<(String, String)>) -> PyResult<Self> {
        let cfg = config::resolve(preset, &params).map_err(value_err)?;
        Ok(PyDrive { d: Drive::new(cfg) })
    }

    #[staticmethod]
    fn load(py: Python<'_>, path: &str) -> PyResult<Self> {
        let d = py.allow_threads(|| state::load(path)).map_err(value_err)?;
        Ok(PyDrive { d })
    }

    fn save(&mut self, py: Python<'_>, path: &str) -> PyResult<()> {
        let d = &mut self.d;
        py.allow_threads(|| state::save(d, path)).map_err(value_err)
    }

    fn describe(&self) -> String {
        config::describe(&self.d.config()).to_string()
    }

    fn purge(&mut self) -> f64 {
        self.d.purge()
    }

    fn trim(&mut self, offset: u64, length: u64) -> PyResult<()> {
        if offset
            .checked_add(length)
            .is_none_or(|e| e > self.d.capacity())
        {
            return Err(value_err(format!(
                "trim {offset}+{length} is outside the drive's {} B",
                self.d.capacity()
            )));
        }
        if let Drive::Ssd(s) = &mut self.d {
            s.trim(offset, length);
        }
        Ok(())
    }

    fn idle(&mut self, seconds: f64) {
        self.d.idle(seconds);
    }

    /// Switch the drive's volatile write cache (WCE); a new drive has it enabled.
    #[setter]
    fn set_write_cache(&mut self, enabled: bool) {
        self.d.set_write_cache(enabled);
    }

    #[getter]
    fn write_cache(&self) -> bool {
        self.d.write_cache()
    }

    #[getter]
    fn clock_s(&self) -> f64 {
        self.d.clock() as f64 / NS as f64
    }

    #[getter]
    fn capacity(&self) -> u64 {
        self.d.capacity()
    }

    fn counters(&self) -> String {
        let snap = self.d.snapshot();
        Value::Object(self.d.counters(&snap)).to_string()
    }

    fn memory_bytes(&self) -> usize {
        match &self.d {
            Drive::Ssd(s) => s.memory_bytes(),
            Drive::Hdd(_) => 0,
        }
    }

    /// FTL self-check (tests): every structure agrees with the others.
    fn check(&self) -> PyResult<()> {
        match &self.d {
            Drive::Ssd(s) => s.ftl.check().map_err(value_err),
            Drive::Hdd(_) => Ok(()),
        }
    }

    /// Keyword-only, so a call names every field of the workload and a reordering cannot
    /// silently swap two numbers.
    #[pyo3(signature = (*, streams, threads = 1, queue_depth = 1, active_range = 1.0, entropy = 1.0,
                        rate_iops = None, duration_s = None, bytes_budget = None, seed = 0, zones = Vec::new(),
                        paths = Vec::new(), progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        py: Python<'_>,
        streams: Vec<(String, String, u64, f64)>,
        threads: u32,
        queue_depth: u32,
        active_range: f64,
        entropy: f64,
        rate_iops: Option<f64>,
        duration_s: Option<f64>,
        bytes_budget: Option<u64>,
        seed: u64,
        zones: Vec<(f64, f64)>,
        paths: Vec<u32>,
        progress: Option<PyObject>,
    ) -> PyResult<String> {
        let mut specs = Vec::new();
        for (access, op, bs, share) in streams {
            let rnd = match access.as_str() {
                "rnd" => true,
                "seq" => false,
                _ => {
                    return Err(value_err(format!(
                        "stream access {access:?}: use 'rnd' or 'seq'"
                    )))
                }
            };
            let write = match op.as_str() {
                "write" => true,
                "read" => false,
                _ => {
                    return Err(value_err(format!(
                        "stream op {op:?}: use 'read' or 'write'"
                    )))
                }
            };
            specs.push(StreamSpec {
                rnd,
                write,
                bs,
                share,
            });
        }
        if let Some(d) = duration_s {
            if !(d > 0.0 && d.is_finite()) {
                return Err(value_err(format!(
                    "duration {d} s must be greater than zero"
                )));
            }
        }
        let spec = RunSpec {
            streams: specs,
            oio: threads.saturating_mul(queue_depth),
            active_range,
            entropy,
            rate_iops,
            duration_ns: duration_s.map(|d| (d * NS as f64).round() as u64),
            bytes_budget,
            seed,
            zones,
        };
        let d = &mut self.d;
        let out = with_progress(py, progress, move |p| {
            let before = d.snapshot();
            let res = d.run_paths(&spec, &paths, p)?;
            Ok(result_json(d, &res, &before))
        })?;
        Ok(out.to_string())
    }

    #[pyo3(signature = (times_s, writes, offsets, sizes, queue_depth, entropy = 1.0, progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn replay(
        &mut self,
        py: Python<'_>,
        times_s: Vec<f64>,
        writes: Vec<bool>,
        offsets: Vec<u64>,
        sizes: Vec<u64>,
        queue_depth: u32,
        entropy: f64,
        progress: Option<PyObject>,
    ) -> PyResult<String> {
        let t0 = times_s.first().copied().unwrap_or(0.0);
        let trace = Trace {
            times_ns: times_s
                .iter()
                .map(|t| ((t - t0).max(0.0) * NS as f64).round() as u64)
                .collect(),
            write: writes,
            off: offsets,
            len: sizes,
        };
        let d = &mut self.d;
        let out = with_progress(py, progress, move |p| {
            let before = d.snapshot();
            let res = d.replay(&trace, queue_depth, entropy, p)?;
            Ok(result_json(d, &res, &before))
        })?;
        Ok(out.to_string())
    }
}

/// All presets with their parameters (JSON).
#[pyfunction]
fn presets() -> PyResult<String> {
    Ok(config::presets_json().map_err(value_err)?.to_string())
}

/// Resolve a preset with parameters and describe the drive without building it (JSON).
#[pyfunction]
#[pyo3(signature = (preset, params = Vec::new()))]
fn describe(preset: &str, params: Vec<(String, String)>) -> PyResult<String> {
    let cfg = config::resolve(preset, &params).map_err(value_err)?;
    Ok(config::describe(&cfg).to_string())
}

/// The smallest size the preset takes with these parameters (an SSD's user_gb, an HDD's
/// capacity_gb), when the one among them is too small; None when it is not given or no larger
/// size would do.
#[pyfunction]
#[pyo3(signature = (*, preset, params))]
fn smallest_size_gb(preset: &str, params: Vec<(String, String)>) -> Option<f64> {
    config::smallest_size_gb(preset, &params)
}

/// Analytic WAF for uniform random single-page writes: policy 'greedy', 'fifo', 'random'.
#[pyfunction]
fn waf_oracle(policy: &str, alpha: f64, pages_per_block: f64) -> PyResult<f64> {
    if alpha.is_nan() || alpha <= 1.0 {
        return Err(value_err(format!("alpha {alpha} must exceed 1")));
    }
    match policy {
        "greedy" => Ok(oracle::waf_greedy(alpha, pages_per_block)),
        "fifo" => Ok(oracle::waf_fifo(alpha)),
        "random" => Ok(oracle::waf_random(alpha)),
        _ => Err(value_err(format!(
            "policy {policy:?}: use greedy, fifo or random"
        ))),
    }
}

#[pymodule]
fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", VERSION)?;
    m.add("DEFAULT_PRESET", config::DEFAULT_PRESET)?;
    m.add_class::<PyDrive>()?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(waf_oracle, m)?)?;
    m.add_function(wrap_pyfunction!(smallest_size_gb, m)?)?;
    crate::streams_py::register(m)?;
    Ok(())
}
