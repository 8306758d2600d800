//! `iolab._sim.StreamWalk`: the stream analysis's per-IO walks (streams.rs) over the
//! record batches of an Arrow C stream (DuckDB's query result, read in place), cut into the
//! chunks of file rows the tabulation's rows follow.

// See python.rs: pyo3's generated wrappers trip this lint, the code here does not.
#![allow(clippy::useless_conversion)]

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule};

use crate::arrow_stream::{Batch, FfiStream, Kind, Reader};
use crate::streams::{Chunk, Rule, Tab, Walk};

fn value_err(e: String) -> PyErr {
    PyValueError::new_err(e)
}

/// The stream's columns, in this order (the optional ones by their presence).
const COLUMNS: [(&str, Kind, bool); 7] = [
    ("time_ns", Kind::I64, true),
    ("w", Kind::U8, true),
    ("offset_bytes", Kind::I64, true),
    ("size_bytes", Kind::I64, true),
    ("lat", Kind::F64, true),
    ("dev", Kind::I32, false),
    ("frn", Kind::I64, false),
];

/// Rows `start..end` of a batch as a run of a chunk.
fn run(b: &Batch, start: usize, end: usize) -> Result<Chunk<'_>, String> {
    let req = |k| b.col(k).map(|c| c.expect("required column"));
    Ok(Chunk {
        time_ns: &req(0)?[start..end],
        write: &b.col::<u8>(1)?.expect("required column")[start..end],
        offset: &req(2)?[start..end],
        size: &req(3)?[start..end],
        lat: &b.col::<f64>(4)?.expect("required column")[start..end],
        dev: b.col::<i32>(5)?.map(|d| &d[start..end]),
    })
}

/// A stream being read and cut into chunks of `chunk_rows` file rows: by the file row
/// number column `frn` when the query filters rows, else by position.
struct Cutter {
    reader: Reader,
    chunk_rows: i64,
    cur: Option<(Arc<Batch>, usize)>,
    seen: i64,
    chunk: Option<i64>,
    /// The current chunk's runs, kept (unreleased) for a chunk the caller must group.
    held: Vec<(Arc<Batch>, usize, usize)>,
}

impl Cutter {
    /// Feed the walk the next chunk's runs; false at the end of the stream.
    fn next_chunk(&mut self, walk: &mut Walk) -> Result<bool, String> {
        loop {
            let (b, start) = match self.cur.take() {
                Some(c) => c,
                None => match self.reader.next()? {
                    Some(b) => (Arc::new(b), 0),
                    None => return Ok(!self.held.is_empty()),
                },
            };
            if start >= b.len() {
                continue;
            }
            let frn = b.col::<i64>(6)?;
            let row = |i: usize| frn.map_or(self.seen + (i - start) as i64, |f| f[i]);
            let chunk = *self
                .chunk
                .get_or_insert(row(start).div_euclid(self.chunk_rows));
            let limit = (chunk + 1) * self.chunk_rows;
            let end = match frn {
                Some(f) => start + f[start..].partition_point(|&r| r < limit),
                None => start + (b.len() - start).min((limit - self.seen).max(0) as usize),
            };
            self.seen += (end - start) as i64;
            if end > start {
                walk.feed(&run(&b, start, end)?)?;
                self.held.push((b.clone(), start, end));
            }
            if end < b.len() {
                self.cur = Some((b, end));
                self.chunk = None;
                if !self.held.is_empty() {
                    return Ok(true);
                }
            }
        }
    }

    /// The held chunk's columns as bytes: issue times, write flags, sizes, latencies.
    fn held_columns(&self) -> Result<[Vec<u8>; 4], String> {
        let mut out: [Vec<u8>; 4] = Default::default();
        for (b, start, end) in &self.held {
            let c = run(b, *start, *end)?;
            out[0].extend(c.time_ns.iter().flat_map(|v| v.to_ne_bytes()));
            out[1].extend_from_slice(c.write);
            out[2].extend(c.size.iter().flat_map(|v| v.to_ne_bytes()));
            out[3].extend(c.lat.iter().flat_map(|v| v.to_ne_bytes()));
        }
        Ok(out)
    }
}

type PyRow = (i64, bool, bool, i64, i64, i64, f64, f64);
/// A spread chunk's (issue times, SEQ flags, write flags, sizes, latencies), as bytes.
type Spread<'py> = (
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);
/// A chunk's tabulation, with its columns when it is too spread for the walk's table.
type Walked = (Tab, Option<[Vec<u8>; 4]>);
/// (rows, None) or (None, the spread chunk's columns).
type Chunked<'py> = (Option<Vec<PyRow>>, Option<Spread<'py>>);

/// Take the stream out of a PyCapsule of the Arrow PyCapsule interface (or of an object
/// with `__arrow_c_stream__`), leaving the capsule's copy released.
fn take_stream(obj: &Bound<'_, PyAny>) -> PyResult<FfiStream> {
    let obj = if obj.hasattr("__arrow_c_stream__")? {
        obj.call_method0("__arrow_c_stream__")?
    } else {
        obj.clone()
    };
    let cap = obj.downcast::<PyCapsule>().map_err(|_| {
        value_err("stream: an Arrow C stream (PyCapsule 'arrow_array_stream') is needed".into())
    })?;
    let name = cap.name()?.map(|n| n.to_string_lossy().into_owned());
    if name.as_deref() != Some("arrow_array_stream") {
        return Err(value_err(format!(
            "stream: a PyCapsule named 'arrow_array_stream' is needed, not {name:?}"
        )));
    }
    // SAFETY: the capsule holds an ArrowArrayStream; moving it out and leaving a released
    // one is how the PyCapsule interface hands a stream to its consumer.
    Ok(unsafe { std::ptr::replace(cap.pointer() as *mut FfiStream, FfiStream::empty()) })
}

#[pyclass(name = "StreamWalk", module = "iolab._sim")]
struct PyStreamWalk {
    w: Walk,
    cut: Option<Cutter>,
}

#[pymethods]
impl PyStreamWalk {
    #[new]
    #[pyo3(signature = (*, step_ns, lookback, gap_bytes, has_latency, max_steps))]
    fn new(
        step_ns: i64,
        lookback: usize,
        gap_bytes: u64,
        has_latency: bool,
        max_steps: i64,
    ) -> PyResult<Self> {
        let rule = Rule {
            step_ns,
            lookback,
            gap_bytes,
            has_latency,
            max_steps,
        };
        Ok(PyStreamWalk {
            w: Walk::new(rule).map_err(value_err)?,
            cut: None,
        })
    }

    /// Start reading `stream` (an Arrow C stream: time_ns, w, offset_bytes, size_bytes, lat,
    /// optionally dev and frn), cut into chunks of `chunk_rows` file rows.
    #[pyo3(signature = (*, stream, chunk_rows))]
    fn open(&mut self, stream: &Bound<'_, PyAny>, chunk_rows: i64) -> PyResult<()> {
        if chunk_rows <= 0 || self.cut.is_some() {
            return Err(value_err("stream walk: one stream, chunk_rows > 0".into()));
        }
        let reader = Reader::start(take_stream(stream)?, &COLUMNS).map_err(value_err)?;
        self.cut = Some(Cutter {
            reader,
            chunk_rows,
            cur: None,
            seen: 0,
            chunk: None,
            held: Vec::new(),
        });
        Ok(())
    }

    /// Walk the next chunk: (rows, None); or (None, its columns as bytes: issue times, SEQ
    /// flags, write flags, sizes, latencies) when it is too spread for the dense table; or
    /// None at the end of the stream.
    fn next_chunk<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Chunked<'py>>> {
        let (walk, cut) = (&mut self.w, self.cut.as_mut());
        let cut = cut.ok_or_else(|| value_err("stream walk: no stream open".into()))?;
        let got = py.allow_threads(|| -> Result<Option<Walked>, String> {
            if !cut.next_chunk(walk)? {
                return Ok(None);
            }
            let tab = walk.end_chunk();
            let cols = matches!(tab, Tab::Flags(_))
                .then(|| cut.held_columns())
                .transpose()?;
            cut.held.clear();
            Ok(Some((tab, cols)))
        });
        let Some((tab, cols)) = got.map_err(value_err)? else {
            return Ok(None);
        };
        Ok(Some(match (tab, cols) {
            (Tab::Rows(rows), _) => {
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
            (Tab::Flags(f), Some([t, w, size, lat])) => {
                let flags: Vec<u8> = f.into_iter().map(u8::from).collect();
                let b = |v: &[u8]| PyBytes::new_bound(py, v);
                (None, Some((b(&t), b(&flags), b(&w), b(&size), b(&lat))))
            }
            (Tab::Flags(_), None) => unreachable!("columns are kept for a spread chunk"),
        }))
    }

    /// Stop reading the stream (its thread ends; safe to call twice).
    fn close(&mut self, py: Python<'_>) {
        if let Some(cut) = self.cut.take() {
            let Cutter {
                mut reader,
                held,
                cur,
                ..
            } = cut;
            py.allow_threads(move || {
                drop((held, cur)); // batches released before the stream
                reader.close()
            });
        }
    }

    /// (in-flight ns per step, maximum in-flight count per step), at least `n_steps` long.
    #[pyo3(signature = (*, n_steps))]
    fn finish(&mut self, n_steps: i64) -> PyResult<(Vec<f64>, Vec<i64>)> {
        self.w.finish(n_steps).map_err(value_err)
    }

    #[getter]
    fn missing_latency(&self) -> i64 {
        self.w.missing_latency
    }

    #[getter]
    fn last_completion_ns(&self) -> Option<i64> {
        self.w.last_completion_ns()
    }

    /// IOs walked so far.
    #[getter]
    fn ios(&self) -> i64 {
        self.w.ios
    }

    /// The latest issue time walked.
    #[getter]
    fn last_issue_ns(&self) -> i64 {
        self.w.last_issue_ns
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyStreamWalk>()
}
