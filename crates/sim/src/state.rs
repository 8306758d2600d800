//! Saving and loading a drive's complete state, so a preconditioned drive can be reused.
//! The file starts with a magic, a format version and the drive's preset and parameters;
//! loading rebuilds the configuration from those and then restores every array. A checksum
//! of everything after the magic ends the file: a state changed on disk (a flipped byte, a
//! copy cut short and padded) is refused, not loaded into a drive that then measures it.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};

use crate::config::resolve;
use crate::ssd::{HostCounters, Ssd};
use crate::Drive;

const MAGIC: &[u8; 8] = b"IOLABSIM";
const VERSION: u32 = 9; // 2: controller cores, flash random generator, burst clock; 3: write point per die;
                        // 4: admission pacing clock, reverse map of live unit heads on compressing drives; 5: GC frontier;
                        // 6: units open in the write buffer, pages held after a read; 7: the GC pass's walk;
                        // 8: foreground GC's pacing; 9: the checksum at the end

#[cfg(not(target_endian = "little"))]
compile_error!("state files are little-endian; add byte swapping for this target");

/// A 64-bit checksum of a byte stream, the same however the stream is cut into writes: one
/// multiply per eight bytes (a state file of a 400 GB drive is ~0.5 GB), for damage, not for
/// an adversary.
#[derive(Default)]
struct Sum {
    h: u64,
    word: u64,
    part: u32,
    len: u64,
}

impl Sum {
    fn mix(&mut self, w: u64) {
        self.h = (self.h.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn add(&mut self, mut b: &[u8]) {
        self.len += b.len() as u64;
        while self.part != 0 && !b.is_empty() {
            self.word |= (b[0] as u64) << (8 * self.part);
            self.part = (self.part + 1) % 8;
            b = &b[1..];
            if self.part == 0 {
                let w = std::mem::take(&mut self.word);
                self.mix(w);
            }
        }
        if self.part != 0 {
            return; // all of `b` went into the word begun before
        }
        let words = b.chunks_exact(8);
        let rest = words.remainder();
        for w in words {
            self.mix(u64::from_le_bytes(w.try_into().expect("eight bytes")));
        }
        for (i, &x) in rest.iter().enumerate() {
            self.word |= (x as u64) << (8 * i);
        }
        self.part = rest.len() as u32;
    }
    fn finish(mut self) -> u64 {
        let (w, n) = (self.word, self.len);
        self.mix(w);
        self.mix(n);
        self.h
    }
}

struct W(BufWriter<File>, Sum);

impl W {
    fn raw(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.1.add(b);
        self.0.write_all(b)
    }
    fn u64(&mut self, v: u64) -> std::io::Result<()> {
        self.raw(&v.to_le_bytes())
    }
    fn bytes(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.u64(b.len() as u64)?;
        self.raw(b)
    }
    fn u32s(&mut self, v: &[u32]) -> std::io::Result<()> {
        // SAFETY: u32 has no padding; the target is little-endian (checked above).
        self.bytes(unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 4) })
    }
    fn u64s(&mut self, v: &[u64]) -> std::io::Result<()> {
        // SAFETY: as above.
        self.bytes(unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 8) })
    }
}

struct R(BufReader<File>, String, Sum);

impl R {
    fn err(&self, what: &str) -> String {
        format!("sim state file {}: {what}", self.1)
    }
    fn read(&mut self, buf: &mut [u8]) -> Result<(), String> {
        self.0
            .read_exact(buf)
            .map_err(|e| self.err(&format!("truncated ({e})")))?;
        self.2.add(buf);
        Ok(())
    }
    fn u64(&mut self) -> Result<u64, String> {
        let mut b = [0u8; 8];
        self.read(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    /// The checksum that ends the file against the bytes read, and nothing after it.
    fn check_end(mut self) -> Result<(), String> {
        let mut b = [0u8; 8];
        self.0
            .read_exact(&mut b)
            .map_err(|e| self.err(&format!("truncated: no checksum at its end ({e})")))?;
        let mut more = [0u8; 1];
        let trailing = self
            .0
            .read(&mut more)
            .map_err(|e| self.err(&e.to_string()))?;
        let path = std::mem::take(&mut self.1);
        let sum = std::mem::take(&mut self.2).finish();
        if u64::from_le_bytes(b) != sum || trailing != 0 {
            return Err(format!(
                "sim state file {path}: its contents do not match the checksum saved with them (the file was \
                 changed, cut or padded after iolab saved it); save the drive's state again"
            ));
        }
        Ok(())
    }
    fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let n = self.u64()? as usize;
        if n > 1 << 36 {
            return Err(self.err("corrupt length field"));
        }
        let mut v = vec![0u8; n];
        self.read(&mut v)?;
        Ok(v)
    }
    /// A block of `n` u64 words (any number when `n` is 0).
    fn scalars(&mut self, n: usize) -> Result<Vec<u64>, String> {
        let b = self.bytes()?;
        if b.len() != n * 8 && n != 0 {
            return Err(self.err("scalar block has the wrong size"));
        }
        Ok(b.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }
    fn u32_list(&mut self) -> Result<Vec<u32>, String> {
        Ok(self
            .bytes()?
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }
    fn fill_u32s(&mut self, dst: &mut Vec<u32>) -> Result<(), String> {
        let n = self.u64()? as usize;
        if n != dst.len() * 4 {
            return Err(self.err("array size does not match the drive's geometry"));
        }
        // SAFETY: dst has exactly n bytes of plain u32 storage.
        let buf = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut u8, n) };
        self.read(buf)
    }
    fn fill_u64s(&mut self, dst: &mut Vec<u64>) -> Result<(), String> {
        let n = self.u64()? as usize;
        if n != dst.len() * 8 {
            return Err(self.err("array size does not match the drive's geometry"));
        }
        // SAFETY: as above.
        let buf = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut u8, n) };
        self.read(buf)
    }
    fn fill_u8s(&mut self, dst: &mut [u8]) -> Result<(), String> {
        let v = self.bytes()?;
        if v.len() != dst.len() {
            return Err(self.err("array size does not match the drive's geometry"));
        }
        dst.copy_from_slice(&v);
        Ok(())
    }
}

pub fn save(drive: &mut Drive, path: &str) -> Result<(), String> {
    let f =
        File::create(path).map_err(|e| format!("sim state file {path}: cannot create it ({e})"))?;
    let mut w = W(BufWriter::with_capacity(1 << 20, f), Sum::default());
    let io = |e: std::io::Error| format!("sim state file {path}: write failed ({e})");
    w.0.write_all(MAGIC).map_err(io)?;
    w.u64(VERSION as u64).map_err(io)?;
    let head = serde_json::json!({"preset": drive.config().preset(), "params": drive.config().overrides()});
    w.bytes(head.to_string().as_bytes()).map_err(io)?;
    match drive {
        Drive::Ssd(s) => {
            let sc = vec![
                s.now,
                s.host.read_bytes,
                s.host.write_bytes,
                s.host.reads,
                s.host.writes,
            ];
            w.u64s(&sc).map_err(io)?;
            w.u64s(&s.io_state()).map_err(io)?;
            w.u64s(&s.ring_state()).map_err(io)?;
            w.u64s(&s.flash.die_busy).map_err(io)?;
            w.u64s(&s.flash.chan_busy).map_err(io)?;
            w.u64s(&s.ftl.scalars()).map_err(io)?;
            let mut cols = s.ftl.block_cols();
            for a in s.ftl.u32_arrays(&mut cols) {
                w.u32s(a).map_err(io)?;
            }
            match s.ftl.rmap_words() {
                (Some(flat), _) => w.u32s(flat).map_err(io)?,
                (_, Some(table)) => w.u64s(table).map_err(io)?,
                _ => unreachable!("a reverse map is flat or a table"),
            }
            let (lens, state, vbits, stamp) = s.ftl.other_arrays(&mut cols);
            w.bytes(lens).map_err(io)?;
            w.bytes(state).map_err(io)?;
            w.u64s(vbits).map_err(io)?;
            w.u64s(stamp).map_err(io)?;
            for q in s.ftl.queues() {
                let v: Vec<u32> = q.iter().copied().collect();
                w.u32s(&v).map_err(io)?;
            }
            let dead = s.ftl.slc_dead().clone();
            w.u32s(&dead).map_err(io)?;
        }
        Drive::Hdd(h) => {
            w.u64s(&h.state()).map_err(io)?;
        }
    }
    let sum = std::mem::take(&mut w.1).finish();
    w.0.write_all(&sum.to_le_bytes()).map_err(io)?;
    w.0.flush().map_err(io)?;
    Ok(())
}

pub fn load(path: &str) -> Result<Drive, String> {
    let f = File::open(path).map_err(|e| format!("sim state file {path}: cannot open it ({e})"))?;
    let mut r = R(
        BufReader::with_capacity(1 << 20, f),
        path.to_string(),
        Sum::default(),
    );
    let (preset, params) = read_header(&mut r)?;
    let cfg = resolve(&preset, &params).map_err(|e| r.err(&e))?;
    let mut drive = Drive::new(cfg);
    match &mut drive {
        Drive::Ssd(s) => load_ssd(&mut r, s)?,
        Drive::Hdd(h) => {
            let n = h.state().len();
            let st = r.scalars(n)?;
            h.set_state(&st);
        }
    }
    r.check_end()?;
    Ok(drive)
}

/// The magic, the format version and the preset and parameters the drive was built with.
fn read_header(r: &mut R) -> Result<(String, Vec<(String, String)>), String> {
    let mut magic = [0u8; 8];
    r.0.read_exact(&mut magic)
        .map_err(|_| r.err("not an iolab sim state file (too short)"))?;
    if &magic != MAGIC {
        return Err(r.err("not an iolab sim state file (bad magic)"));
    }
    let v = r.u64()?;
    if v != VERSION as u64 {
        return Err(r.err(&format!(
            "format version {v}; this iolab reads version {VERSION}"
        )));
    }
    let head: serde_json::Value =
        serde_json::from_slice(&r.bytes()?).map_err(|e| r.err(&format!("bad header ({e})")))?;
    let preset = head["preset"]
        .as_str()
        .ok_or_else(|| r.err("header has no preset"))?
        .to_string();
    let params: Vec<(String, String)> = serde_json::from_value(head["params"].clone())
        .map_err(|e| r.err(&format!("bad parameters ({e})")))?;
    Ok((preset, params))
}

/// An SSD's state, in the order `save` wrote it, into a drive of the same configuration.
fn load_ssd(r: &mut R, s: &mut Ssd) -> Result<(), String> {
    let sc = r.scalars(5)?;
    s.now = sc[0];
    s.host = HostCounters {
        read_bytes: sc[1],
        write_bytes: sc[2],
        reads: sc[3],
        writes: sc[4],
    };
    let io = r.scalars(s.io_state().len())?;
    s.set_io_state(&io);
    let ring = r.scalars(0)?;
    s.set_ring_state(&ring);
    r.fill_u64s(&mut s.flash.die_busy)?;
    s.flash.touch_all();
    r.fill_u64s(&mut s.flash.chan_busy)?;
    let n = s.ftl.scalars().len();
    let sc = r.scalars(n)?;
    s.ftl.set_scalars(&sc);
    // sized by the drive's geometry, as every array below; filled, then given to the FTL
    let mut cols = s.ftl.block_cols();
    for a in s.ftl.u32_arrays(&mut cols) {
        r.fill_u32s(a)?;
    }
    match s.ftl.rmap_words() {
        (Some(flat), _) => r.fill_u32s(flat)?,
        (_, Some(table)) => r.fill_u64s(table)?,
        _ => unreachable!("a reverse map is flat or a table"),
    }
    let (lens, state, vbits, stamp) = s.ftl.other_arrays(&mut cols);
    r.fill_u8s(lens)?;
    r.fill_u8s(state)?;
    r.fill_u64s(vbits)?;
    r.fill_u64s(stamp)?;
    s.ftl.set_block_cols(&cols);
    for q in s.ftl.queues() {
        *q = r.u32_list()?.into();
    }
    *s.ftl.slc_dead() = r.u32_list()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Sum;

    /// The checksum is of the bytes, whatever writes they came in, and any one changed byte
    /// or one byte more changes it.
    #[test]
    fn the_checksum_is_of_the_bytes_not_of_their_writes() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let whole = |d: &[u8]| {
            let mut s = Sum::default();
            s.add(d);
            s.finish()
        };
        let want = whole(&data);
        for cut in [1usize, 3, 7, 8, 9, 64, 333] {
            let mut s = Sum::default();
            for piece in data.chunks(cut) {
                s.add(piece);
            }
            assert_eq!(s.finish(), want, "pieces of {cut}");
        }
        for i in [0usize, 5, 500, 999] {
            let mut d = data.clone();
            d[i] ^= 1;
            assert_ne!(whole(&d), want, "byte {i}");
        }
        let mut longer = data.clone();
        longer.push(0);
        assert_ne!(whole(&longer), want);
    }
}
