//! Writing a layer file: compress blocks in parallel, write under a temporary name, sync,
//! rename.

use super::header::Header;
use super::*;
use crate::index;
use rayon::prelude::*;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use xxhash_rust::xxh3::xxh3_64;

/// How table files are written.
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    /// Positions per compressed block: smaller blocks make cold probes cheaper, larger
    /// ones compress better.
    pub block_size: u32,
    /// zstd level, 1..=22.
    pub zstd_level: i32,
}

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions {
            block_size: DEFAULT_BLOCK,
            zstd_level: 9,
        }
    }
}

/// What [`write_layer`] wrote.
#[derive(Clone, Debug)]
pub struct WrittenLayer {
    /// Where it was written.
    pub path: PathBuf,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The summary stored in its header.
    pub summary: LayerSummary,
}

/// Writes `values` (layer `seeds`, every position in index order) to its final path under
/// `db`, atomically: under a temporary name first, renamed when complete and synced.
///
/// # Errors
///
/// [`StoreError::Io`] when a folder or the file cannot be created or written (a full disk,
/// say); the temporary file is then removed.
///
/// # Panics
///
/// If `values` does not hold exactly the positions of layer `seeds`.
pub fn write_layer(
    db: &Path,
    rules: Rules,
    seeds: u32,
    values: &[i8],
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    let summary = LayerSummary::from_values(seeds, values);
    let bytes = as_bytes(values);
    write_table(db, rules, TableKind::Values, bytes, summary, opts)
}

/// The bytes of an `i8` slice, without copying.
fn as_bytes(values: &[i8]) -> &[u8] {
    // SAFETY: i8 and u8 have the same size and alignment, and every bit pattern is valid
    // for both.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), values.len()) }
}

/// Writes one table of `kind` for layer `summary.seeds` (its bytes in index order, and the
/// summary of the layer's values for the header), atomically.
pub(crate) fn write_table(
    db: &Path,
    rules: Rules,
    kind: TableKind,
    bytes: &[u8],
    summary: LayerSummary,
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    let seeds = summary.seeds;
    assert_eq!(bytes.len() as u64, index::size(seeds));
    let path = table_path(db, rules, seeds, kind);
    let io = |source| StoreError::Io {
        path: path.clone(),
        source,
    };
    fs::create_dir_all(rules_dir(db, rules)).map_err(io)?;

    let blocks: Vec<Vec<u8>> = bytes
        .par_chunks(opts.block_size as usize)
        .map(|chunk| {
            zstd::bulk::compress(chunk, opts.zstd_level)
                .expect("zstd compression of a memory buffer")
        })
        .collect();
    let header = Header::new(rules, kind, opts.block_size, &summary);
    let lens: Vec<u64> = blocks.iter().map(|b| b.len() as u64).collect();
    let sums: Vec<u64> = blocks.iter().map(|b| xxh3_64(b)).collect();
    let header = header.encode(&lens, &sums);

    let tmp = temporary_path(db, rules, seeds, kind);
    let written = write_synced(&tmp, &header, &blocks);
    if let Err(source) = written {
        // Leave nothing behind: a full disk must not stay full of a file nobody will use.
        let _ = fs::remove_file(&tmp);
        return Err(StoreError::Io { path: tmp, source });
    }
    if let Err(source) = fs::rename(&tmp, &path) {
        let _ = fs::remove_file(&tmp);
        return Err(io(source));
    }
    if let Some(dir) = path.parent() {
        // Make the rename itself durable.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    let bytes = fs::metadata(&path).map_err(io)?.len();
    Ok(WrittenLayer {
        path,
        bytes,
        summary,
    })
}

/// Writes the header and the blocks to `tmp` and syncs it to disk.
fn write_synced(tmp: &Path, header: &[u8], blocks: &[Vec<u8>]) -> std::io::Result<()> {
    let file = File::create(tmp)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    w.write_all(header)?;
    for b in blocks {
        w.write_all(b)?;
    }
    let file = w.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()
}
