//! `iolab._sim.StreamWalk`: the stream analysis's per-IO walks (streams.rs) over numpy
//! columns, read in place through the buffer protocol.

// See python.rs: pyo3's generated wrappers trip this lint, the code here does not.
#![allow(clippy::useless_conversion)]

use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::streams::{Chunk, Rule, Tab, Walk};

fn value_err(e: String) -> PyErr {
    PyValueError::new_err(e)
}

/// A C-contiguous buffer of `T` (a numpy array of that dtype), viewed without a copy.
fn view<'a, T: Element>(buf: &'a PyBuffer<T>, name: &str) -> PyResult<&'a [T]> {
    if !buf.is_c_contiguous() {
        return Err(value_err(format!("{name}: a contiguous array is needed")));
    }
    // SAFETY: the buffer is contiguous, holds item_count items of T (PyBuffer::get checked
    // the format) and stays alive and unresized for the borrow: the caller holds it.
    Ok(unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const T, buf.item_count()) })
}

fn buffer<T: Element>(obj: &Bound<'_, PyAny>, name: &str, dtype: &str) -> PyResult<PyBuffer<T>> {
    PyBuffer::get_bound(obj)
        .map_err(|_| value_err(format!("{name}: a contiguous {dtype} array is needed")))
}

/// Device codes of any unsigned or signed integer dtype DuckDB hands back, as i64.
fn device_codes(obj: &Bound<'_, PyAny>, py: Python<'_>) -> PyResult<Vec<i64>> {
    macro_rules! try_as {
        ($t:ty) => {
            if let Ok(b) = PyBuffer::<$t>::get_bound(obj) {
                return Ok(b.to_vec(py)?.into_iter().map(|v| v as i64).collect());
            }
        };
    }
    try_as!(u8);
    try_as!(u16);
    try_as!(u32);
    try_as!(i32);
    try_as!(i64);
    Err(value_err("device: an integer array is needed".into()))
}

type PyRow = (i64, bool, bool, i64, i64, i64, f64, f64);
/// (rows, None) or (None, SEQ flags).
type Added<'py> = (Option<Vec<PyRow>>, Option<Bound<'py, PyBytes>>);

#[pyclass(name = "StreamWalk", module = "iolab._sim")]
struct PyStreamWalk {
    w: Walk,
}

#[pymethods]
impl PyStreamWalk {
    #[new]
    #[pyo3(signature = (*, step_ns, lookback, gap_bytes, has_latency))]
    fn new(step_ns: i64, lookback: usize, gap_bytes: u64, has_latency: bool) -> PyResult<Self> {
        let rule = Rule {
            step_ns,
            lookback,
            gap_bytes,
            has_latency,
        };
        Ok(PyStreamWalk {
            w: Walk::new(rule).map_err(value_err)?,
        })
    }

    /// Walk one chunk; returns (rows, None) or, when the chunk is too spread for a dense
    /// table, (None, SEQ flags as bytes).
    #[pyo3(signature = (*, time_ns, write, offset, size, latency, device = None))]
    #[allow(clippy::too_many_arguments)]
    fn add<'py>(
        &mut self,
        py: Python<'py>,
        time_ns: &Bound<'py, PyAny>,
        write: &Bound<'py, PyAny>,
        offset: &Bound<'py, PyAny>,
        size: &Bound<'py, PyAny>,
        latency: &Bound<'py, PyAny>,
        device: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Added<'py>> {
        let (t, wr) = (
            buffer::<i64>(time_ns, "time_ns", "int64")?,
            buffer::<u8>(write, "write", "uint8 (a bool array viewed as uint8)")?,
        );
        let (o, s) = (
            buffer::<i64>(offset, "offset", "int64")?,
            buffer::<i64>(size, "size", "int64")?,
        );
        let l = buffer::<f64>(latency, "latency", "float64")?;
        let dev = device.map(|d| device_codes(d, py)).transpose()?;
        let chunk = Chunk {
            time_ns: view(&t, "time_ns")?,
            write: view(&wr, "write")?,
            offset: view(&o, "offset")?,
            size: view(&s, "size")?,
            lat: view(&l, "latency")?,
            dev: dev.as_deref(),
        };
        let walk = &mut self.w;
        let tab = py.allow_threads(|| walk.add(&chunk)).map_err(value_err)?;
        Ok(match tab {
            Tab::Rows(rows) => {
                let rows = rows
                    .into_iter()
                    .map(|r| {
                        (
                            r.step, r.seq, r.write, r.size, r.ios, r.lat_n, r.lat_sum, r.lat_max,
                        )
                    })
                    .collect();
                (Some(rows), None)
            }
            Tab::Flags(f) => {
                let bytes: Vec<u8> = f.into_iter().map(u8::from).collect();
                (None, Some(PyBytes::new_bound(py, &bytes)))
            }
        })
    }

    /// (in-flight ns per step, maximum in-flight count per step), at least `n_steps` long.
    #[pyo3(signature = (*, n_steps))]
    fn finish(&mut self, n_steps: i64) -> (Vec<f64>, Vec<i64>) {
        self.w.finish(n_steps)
    }

    #[getter]
    fn missing_latency(&self) -> i64 {
        self.w.missing_latency
    }

    #[getter]
    fn last_completion_ns(&self) -> Option<i64> {
        self.w.last_completion_ns()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyStreamWalk>()
}
