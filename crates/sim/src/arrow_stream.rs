//! Record batches read from an Arrow C stream (the Arrow C data interface: the
//! `__arrow_c_stream__` PyCapsule DuckDB hands out), so the stream analysis reads DuckDB's
//! own export buffers in place: no pyarrow, and none of the copies `fetchnumpy` makes (it
//! cost three times what the Parquet decoding did). Only non-null primitive columns are
//! read. A thread of its own pulls the batches, so DuckDB scans the next batch while the
//! walk works on the current one.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

/// ArrowSchema of the C data interface.
#[repr(C)]
pub struct FfiSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut FfiSchema,
    dictionary: *mut FfiSchema,
    release: Option<unsafe extern "C" fn(*mut FfiSchema)>,
    private_data: *mut c_void,
}

/// ArrowArray of the C data interface.
#[repr(C)]
pub struct FfiArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut FfiArray,
    dictionary: *mut FfiArray,
    release: Option<unsafe extern "C" fn(*mut FfiArray)>,
    private_data: *mut c_void,
}

/// ArrowArrayStream of the C data interface.
#[repr(C)]
pub struct FfiStream {
    get_schema: Option<unsafe extern "C" fn(*mut FfiStream, *mut FfiSchema) -> c_int>,
    get_next: Option<unsafe extern "C" fn(*mut FfiStream, *mut FfiArray) -> c_int>,
    get_last_error: Option<unsafe extern "C" fn(*mut FfiStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut FfiStream)>,
    private_data: *mut c_void,
}

impl FfiSchema {
    fn empty() -> FfiSchema {
        // SAFETY: all-zero is the released state (null pointers, no release callback).
        unsafe { std::mem::zeroed() }
    }
}

impl FfiArray {
    fn empty() -> FfiArray {
        // SAFETY: as for FfiSchema.
        unsafe { std::mem::zeroed() }
    }
}

impl FfiStream {
    pub fn empty() -> FfiStream {
        // SAFETY: as for FfiSchema.
        unsafe { std::mem::zeroed() }
    }

    pub fn is_released(&self) -> bool {
        self.release.is_none()
    }

    fn last_error(&mut self, rc: c_int) -> String {
        let msg = self.get_last_error.and_then(|f| {
            // SAFETY: the stream is live; the message stays valid until the next call.
            let p = unsafe { f(self) };
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        });
        msg.unwrap_or_else(|| format!("Arrow stream error {rc}"))
    }
}

impl Drop for FfiStream {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: a live stream owned here; release marks it released.
            unsafe { release(self) }
        }
    }
}

// SAFETY: the C data interface lets a stream and its arrays be used from another thread as
// long as calls on one object are not concurrent; each object has one owner here.
unsafe impl Send for FfiStream {}
unsafe impl Send for FfiArray {}
unsafe impl Sync for FfiArray {}

/// A column's Arrow format code, as the walk reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    I64,
    U8,
    F64,
    I32,
}

impl Kind {
    fn format(self) -> &'static str {
        match self {
            Kind::I64 => "l",
            Kind::U8 => "C",
            Kind::F64 => "g",
            Kind::I32 => "i",
        }
    }
}

/// The stream's columns by name, in the order asked for (None: an optional column absent).
fn column_indexes(
    schema: &FfiSchema,
    want: &[(&str, Kind, bool)],
) -> Result<Vec<Option<usize>>, String> {
    // SAFETY: a schema the producer filled in: n_children valid child pointers.
    let children: Vec<&FfiSchema> = (0..schema.n_children.max(0) as usize)
        .map(|i| unsafe { &**schema.children.add(i) })
        .collect();
    let name = |s: &FfiSchema, p: *const c_char| {
        let _ = s;
        // SAFETY: null or a NUL-terminated string owned by the schema.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    want.iter()
        .map(|&(col, kind, required)| {
            let Some(i) = children
                .iter()
                .position(|c| name(c, c.name).as_deref() == Some(col))
            else {
                return if required {
                    Err(format!("Arrow stream: no column {col}"))
                } else {
                    Ok(None)
                };
            };
            let fmt = name(children[i], children[i].format).unwrap_or_default();
            if fmt != kind.format() {
                return Err(format!(
                    "Arrow stream: column {col} has Arrow format {fmt:?}, {:?} is needed",
                    kind.format()
                ));
            }
            Ok(Some(i))
        })
        .collect()
}

/// One record batch, released when the last holder drops it.
pub struct Batch {
    array: FfiArray,
    cols: Vec<Option<usize>>,
    names: Arc<Vec<&'static str>>,
}

impl Drop for Batch {
    fn drop(&mut self) {
        if let Some(release) = self.array.release {
            // SAFETY: a live array owned here.
            unsafe { release(&mut self.array) }
        }
    }
}

impl Batch {
    pub fn len(&self) -> usize {
        self.array.length as usize
    }

    /// Column `k` (in the order the reader was asked for) as a slice of T, or None when the
    /// optional column is absent. T must match the format checked against the schema.
    pub fn col<T>(&self, k: usize) -> Result<Option<&[T]>, String> {
        let Some(i) = self.cols[k] else {
            return Ok(None);
        };
        // SAFETY: the batch's children match the schema checked when the reader opened.
        let child = unsafe { &**self.array.children.add(i) };
        if child.n_buffers < 2 || child.length < self.array.offset + self.array.length {
            return Err(format!(
                "Arrow stream: column {} is not a primitive array",
                self.names[k]
            ));
        }
        // SAFETY: buffer 0 is the validity bitmap (may be null), buffer 1 the values.
        let (valid, data) = unsafe { (*child.buffers, *child.buffers.add(1)) };
        if child.null_count != 0 && !valid.is_null() {
            return Err(format!(
                "Arrow stream: column {} holds NULLs",
                self.names[k]
            ));
        }
        let start = (child.offset + self.array.offset) as usize;
        // SAFETY: the values buffer holds child.length values of T from child.offset on,
        // alive until this batch is released.
        Ok(Some(unsafe {
            std::slice::from_raw_parts((data as *const T).add(start), self.len())
        }))
    }
}

/// The batches of one stream, pulled by a thread of its own a couple of batches ahead.
pub struct Reader {
    rx: Option<Receiver<Result<Batch, String>>>,
    thread: Option<JoinHandle<()>>,
}

impl Reader {
    /// Start reading `stream` (moved in), whose columns `want` (name, kind, required) must have.
    pub fn start(
        mut stream: FfiStream,
        want: &[(&'static str, Kind, bool)],
    ) -> Result<Reader, String> {
        if stream.is_released() {
            return Err("Arrow stream: already consumed".into());
        }
        let mut schema = FfiSchema::empty();
        // SAFETY: a live stream; get_schema fills `schema`, which we release below.
        let rc = unsafe {
            stream.get_schema.ok_or("Arrow stream: no get_schema")?(&mut stream, &mut schema)
        };
        if rc != 0 {
            return Err(stream.last_error(rc));
        }
        let cols = column_indexes(&schema, want);
        if let Some(release) = schema.release {
            // SAFETY: the schema was filled by get_schema above.
            unsafe { release(&mut schema) }
        }
        let cols = cols?;
        let names = Arc::new(want.iter().map(|w| w.0).collect::<Vec<_>>());
        let (tx, rx) = sync_channel(2);
        let thread = std::thread::spawn(move || loop {
            let mut a = FfiArray::empty();
            // SAFETY: a live stream, used from this thread only.
            let rc = unsafe { (stream.get_next.expect("get_next"))(&mut stream, &mut a) };
            let item = if rc != 0 {
                Err(stream.last_error(rc))
            } else if a.release.is_none() {
                return; // end of stream; dropping `stream` releases it
            } else {
                Ok(Batch {
                    array: a,
                    cols: cols.clone(),
                    names: names.clone(),
                })
            };
            let failed = item.is_err();
            if tx.send(item).is_err() || failed {
                return;
            }
        });
        Ok(Reader {
            rx: Some(rx),
            thread: Some(thread),
        })
    }

    /// The next batch, or None at the end of the stream.
    pub fn next(&mut self) -> Result<Option<Batch>, String> {
        match self.rx.as_ref().map(|rx| rx.recv()) {
            Some(Ok(Ok(b))) => Ok(Some(b)),
            Some(Ok(Err(e))) => {
                self.rx = None;
                Err(e)
            }
            Some(Err(_)) | None => {
                self.rx = None;
                Ok(None)
            }
        }
    }

    /// Stop reading and wait for the thread (call without the GIL: the producer may need it).
    pub fn close(&mut self) {
        self.rx = None; // the thread's next send fails, and it releases the stream
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
