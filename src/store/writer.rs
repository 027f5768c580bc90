//! Writing a layer file: compress blocks in parallel, write under a temporary name, sync,
//! rename.

use super::*;
use crate::index;
use rayon::prelude::*;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use xxhash_rust::xxh3::xxh3_64;

#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    pub block_size: u32,
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
    pub path: PathBuf,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The summary stored in its header.
    pub summary: LayerSummary,
}

/// Writes `values` (layer `seeds`, every position in index order) to its final path under
/// `db`, atomically.
pub fn write_layer(
    db: &Path,
    rules: Rules,
    seeds: u32,
    values: &[i8],
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    assert_eq!(values.len() as u64, index::size(seeds));
    let path = layer_path(db, rules, seeds);
    let io = |source| StoreError::Io {
        path: path.clone(),
        source,
    };
    fs::create_dir_all(rules_dir(db, rules)).map_err(io)?;

    let blocks: Vec<Vec<u8>> = values
        .par_chunks(opts.block_size as usize)
        .map(|chunk| {
            // A copy as bytes (one block at a time) keeps this free of unsafe casts.
            let bytes: Vec<u8> = chunk.iter().map(|&v| v as u8).collect();
            zstd::bulk::compress(&bytes, opts.zstd_level)
                .expect("zstd compression of a memory buffer")
        })
        .collect();
    let summary = LayerSummary::from_values(seeds, values);
    let header = encode_header(rules, seeds, opts.block_size, &summary, &blocks);

    let tmp = path.with_extension("awdb.tmp");
    let io_tmp = |source| StoreError::Io {
        path: tmp.clone(),
        source,
    };
    {
        let file = File::create(&tmp).map_err(io_tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        w.write_all(&header).map_err(io_tmp)?;
        for b in &blocks {
            w.write_all(b).map_err(io_tmp)?;
        }
        let file = w.into_inner().map_err(|e| io_tmp(e.into_error()))?;
        file.sync_all().map_err(io_tmp)?;
    }
    // A hook for the interrupted-build test: die with the layer written but not renamed.
    if std::env::var("AWARI_TEST_ABORT_BEFORE_RENAME")
        .ok()
        .as_deref()
        == Some(&seeds.to_string())
    {
        std::process::abort();
    }
    fs::rename(&tmp, &path).map_err(io)?;
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

fn encode_header(
    rules: Rules,
    seeds: u32,
    block_size: u32,
    summary: &LayerSummary,
    blocks: &[Vec<u8>],
) -> Vec<u8> {
    let n_blocks = blocks.len();
    let header_len = FIXED_HEADER + 8 * (n_blocks + 1) + 8 * n_blocks + 8;
    let mut h = Vec::with_capacity(header_len);
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&VERSION.to_le_bytes());
    h.extend_from_slice(&[rules.code(), INDEX_FULL, COMPRESSION_ZSTD, ENCODING_I8]);
    h.extend_from_slice(&seeds.to_le_bytes());
    h.extend_from_slice(&block_size.to_le_bytes());
    h.extend_from_slice(&summary.positions.to_le_bytes());
    h.extend_from_slice(&(n_blocks as u64).to_le_bytes());
    for c in summary.histogram {
        h.extend_from_slice(&c.to_le_bytes());
    }
    debug_assert_eq!(h.len(), FIXED_HEADER);
    let mut offset = header_len as u64;
    h.extend_from_slice(&offset.to_le_bytes());
    for b in blocks {
        offset += b.len() as u64;
        h.extend_from_slice(&offset.to_le_bytes());
    }
    for b in blocks {
        h.extend_from_slice(&xxh3_64(b).to_le_bytes());
    }
    let sum = xxh3_64(&h);
    h.extend_from_slice(&sum.to_le_bytes());
    debug_assert_eq!(h.len(), header_len);
    h
}
