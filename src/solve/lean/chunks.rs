//! Scratch files of the lean pass: a sequence of zstd-compressed chunks, each with its own
//! checksum, so a resumed build finds damage when it reads a chunk instead of trusting it.
//!
//! Chunk: `u32` raw length, `u32` compressed length, `u64` xxh3-64 of the compressed
//! bytes, then the compressed bytes (little-endian). The files are written once, synced,
//! and named in a checkpoint only after that, so a file a checkpoint names is whole.

use crate::store::{zstd_contexts, StoreError};
use rayon::prelude::*;
use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

/// zstd level of scratch files: they are read back a few times at most, so speed wins.
pub(crate) const SCRATCH_LEVEL: i32 = 1;
const CHUNK_HEADER: usize = 16;

pub(crate) fn io_err(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn corrupted(path: &Path, what: &str) -> StoreError {
    StoreError::Corrupted {
        path: path.to_path_buf(),
        what: what.to_string(),
    }
}

/// Compresses one chunk's bytes (callers compress in parallel, then write in order).
pub(crate) fn compress(raw: &[u8]) -> Vec<u8> {
    zstd_contexts::compress(raw, SCRATCH_LEVEL)
}

/// Decompresses one chunk's bytes into `raw_len` bytes; None if they do not decompress to
/// exactly that.
fn decompress(bytes: &[u8], raw_len: usize) -> Option<Vec<u8>> {
    let mut raw = vec![0u8; raw_len];
    match zstd_contexts::decompress_to_buffer(bytes, &mut raw[..]) {
        Ok(len) if len == raw_len => Some(raw),
        _ => None,
    }
}

/// A chunk of bytes that are their own raw form ([`ChunkWriter::write_parallel`]).
pub(crate) fn as_is(raw: &[u8]) -> Cow<'_, [u8]> {
    Cow::Borrowed(raw)
}

/// Chunks [`ChunkWriter::write_parallel`] compresses at a time: enough for every thread,
/// few enough that their copies stay small.
const PARALLEL_CHUNKS: usize = 32;

/// Writes chunks to a new file.
pub(crate) struct ChunkWriter {
    path: PathBuf,
    out: BufWriter<File>,
    bytes: u64,
}

impl ChunkWriter {
    pub fn create(path: &Path) -> Result<ChunkWriter, StoreError> {
        let file = File::create(path).map_err(|e| io_err(path, e))?;
        Ok(ChunkWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 16, file),
            bytes: 0,
        })
    }

    /// Appends a chunk compressed by [`compress`] from `raw_len` bytes.
    pub fn write_compressed(&mut self, raw_len: usize, packed: &[u8]) -> Result<(), StoreError> {
        let mut head = [0u8; CHUNK_HEADER];
        head[0..4].copy_from_slice(&(raw_len as u32).to_le_bytes());
        head[4..8].copy_from_slice(&(packed.len() as u32).to_le_bytes());
        head[8..16].copy_from_slice(&xxh3_64(packed).to_le_bytes());
        let path = &self.path;
        self.out.write_all(&head).map_err(|e| io_err(path, e))?;
        self.out.write_all(packed).map_err(|e| io_err(path, e))?;
        self.bytes += (CHUNK_HEADER + packed.len()) as u64;
        Ok(())
    }

    /// Appends `items` as chunks of `per_chunk` items: `raw` gives a chunk's raw bytes,
    /// and the chunks are encoded and compressed in parallel, then written in order,
    /// [`PARALLEL_CHUNKS`] at a time, so the compressed copies held at once stay small
    /// (the nibbles' snapshot of a big layer is gigabytes).
    pub fn write_parallel<T: Sync>(
        &mut self,
        items: &[T],
        per_chunk: usize,
        raw: impl for<'a> Fn(&'a [T]) -> Cow<'a, [u8]> + Sync,
    ) -> Result<(), StoreError> {
        for group in items.chunks(per_chunk * PARALLEL_CHUNKS) {
            let packed: Vec<(usize, Vec<u8>)> = group
                .par_chunks(per_chunk)
                .map(|part| {
                    let raw = raw(part);
                    (raw.len(), compress(&raw))
                })
                .collect();
            for (raw_len, p) in &packed {
                self.write_compressed(*raw_len, p)?;
            }
        }
        Ok(())
    }

    /// Appends `raw` as one chunk.
    #[cfg(test)]
    pub fn write(&mut self, raw: &[u8]) -> Result<(), StoreError> {
        self.write_compressed(raw.len(), &compress(raw))
    }

    /// Flushes the file; its size in bytes. It is synced only when a checkpoint names
    /// it ([`sync`]): most scratch files are gone before the next checkpoint.
    pub fn finish(self) -> Result<u64, StoreError> {
        let path = self.path.clone();
        self.out
            .into_inner()
            .map_err(|e| io_err(&path, e.into_error()))?;
        Ok(self.bytes)
    }
}

/// Makes a finished file durable (syncing a file already synced costs little).
pub(crate) fn sync(path: &Path) -> Result<(), StoreError> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_err(path, e))
}

/// A digest of a whole chunk file: xxh3-64 over every chunk's header (lengths and the
/// checksum of its bytes), which a checkpoint records for each file it names. It binds a
/// name to its contents without reading them: another file put in its place (another
/// threshold's run, another layer's exits) has other chunk checksums, and a chunk whose
/// bytes were changed in place fails its own checksum when it is read. Errors if the
/// chunks do not end exactly at the end of the file.
pub(crate) fn digest(path: &Path) -> Result<u64, StoreError> {
    let file = File::open(path).map_err(|e| io_err(path, e))?;
    let size = file.metadata().map_err(|e| io_err(path, e))?.len();
    let mut input = BufReader::with_capacity(1 << 16, file);
    let mut hasher = Xxh3::new();
    let mut at = 0u64;
    while at < size {
        let mut head = [0u8; CHUNK_HEADER];
        if at + CHUNK_HEADER as u64 > size {
            return Err(corrupted(path, "a scratch file is truncated"));
        }
        input.read_exact(&mut head).map_err(|e| io_err(path, e))?;
        let len = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes"));
        hasher.update(&head);
        input
            .seek_relative(i64::from(len))
            .map_err(|e| io_err(path, e))?;
        at += (CHUNK_HEADER as u64) + u64::from(len);
    }
    if at != size {
        return Err(corrupted(path, "a scratch file is truncated"));
    }
    hasher.update(&size.to_le_bytes());
    Ok(hasher.digest())
}

/// Reads the chunks of a file in order.
pub(crate) struct ChunkReader {
    path: PathBuf,
    input: BufReader<File>,
}

/// One chunk as stored: checked, not yet decompressed.
pub(crate) struct Packed {
    pub raw_len: usize,
    pub bytes: Vec<u8>,
}

impl Packed {
    /// The chunk's bytes; an error names `path` if they do not decompress to their length.
    pub fn unpack(&self, path: &Path) -> Result<Vec<u8>, StoreError> {
        decompress(&self.bytes, self.raw_len)
            .ok_or_else(|| corrupted(path, "a scratch chunk does not decompress"))
    }
}

impl ChunkReader {
    pub fn open(path: &Path) -> Result<ChunkReader, StoreError> {
        let file = File::open(path).map_err(|e| io_err(path, e))?;
        Ok(ChunkReader {
            path: path.to_path_buf(),
            // Small: a merge holds one reader for each of its runs.
            input: BufReader::with_capacity(1 << 14, file),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next chunk, its checksum checked; None at the end of the file.
    pub fn next_packed(&mut self) -> Result<Option<Packed>, StoreError> {
        let mut head = [0u8; CHUNK_HEADER];
        match self.input.read(&mut head[..1]) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) => return Err(io_err(&self.path, e)),
        }
        self.read_exact(&mut head[1..])?;
        let raw_len = u32::from_le_bytes(head[0..4].try_into().expect("4 bytes")) as usize;
        let len = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes")) as usize;
        let sum = u64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
        if len > zstd::zstd_safe::compress_bound(raw_len) {
            return Err(corrupted(&self.path, "a scratch chunk's length is wrong"));
        }
        let mut bytes = vec![0u8; len];
        self.read_exact(&mut bytes)?;
        if xxh3_64(&bytes) != sum {
            return Err(corrupted(&self.path, "a scratch chunk fails its checksum"));
        }
        Ok(Some(Packed { raw_len, bytes }))
    }

    /// The next chunk's bytes; None at the end of the file.
    pub fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, StoreError> {
        match self.next_packed()? {
            Some(p) => p.unpack(&self.path).map(Some),
            None => Ok(None),
        }
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), StoreError> {
        self.input.read_exact(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                corrupted(&self.path, "a scratch file is truncated")
            } else {
                io_err(&self.path, e)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_round_trip_and_damage_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        let mut w = ChunkWriter::create(&path).unwrap();
        w.write(&[1, 2, 3]).unwrap();
        w.write(&vec![7u8; 100_000]).unwrap();
        w.finish().unwrap();
        let mut r = ChunkReader::open(&path).unwrap();
        assert_eq!(r.next_chunk().unwrap().unwrap(), vec![1, 2, 3]);
        assert_eq!(r.next_chunk().unwrap().unwrap(), vec![7u8; 100_000]);
        assert!(r.next_chunk().unwrap().is_none());

        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let mut r = ChunkReader::open(&path).unwrap();
        r.next_chunk().unwrap();
        assert!(r.next_chunk().is_err());

        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let mut r = ChunkReader::open(&path).unwrap();
        r.next_chunk().unwrap();
        assert!(r.next_chunk().is_err());
    }
}
