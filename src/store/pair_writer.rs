//! Writing the two tables of a pair (the bounds, or the own-row values) together, block by
//! block, the high table sharing the low table's blocks where they agree.

use super::writer::TableWriter;
use super::*;
use crate::index;
use rayon::prelude::*;
use std::fs;
use std::io::Write;
use xxhash_rust::xxh3::xxh3_64;

/// The two tables of a pair (the low and the high end of each position's interval: the
/// bounds, or the own-row values), written together block by block. A block of the high
/// table whose bytes are the low table's block (every position of it exact) is not
/// written again: the high file keeps a block of length 0 there, with the low block's
/// checksum (compression code 2), and its reader takes the low file's block. An exact
/// layer's pair thus costs one table of blocks. A high table that shares no block is
/// written as any other table. The low file is renamed into place first, then the high
/// file, which marks the layer complete.
pub(crate) struct PairWriter {
    low: TableWriter,
    high: TableWriter,
    /// Bytes of each received that do not yet fill a block.
    partial: (Vec<u8>, Vec<u8>),
}

impl PairWriter {
    /// A writer of layer `seeds`' pair of tables, `high` naming the high table's kind.
    ///
    /// # Errors
    ///
    /// A temporary file that cannot be created.
    ///
    /// # Panics
    ///
    /// If `high` is not the high table of a pair.
    pub fn create(
        db: &Path,
        rules: Rules,
        seeds: u32,
        high: TableKind,
        opts: WriteOptions,
    ) -> Result<PairWriter, StoreError> {
        let low = high.low_of_pair().expect("the high table of a pair");
        Ok(PairWriter {
            low: TableWriter::create(db, rules, seeds, low, opts)?,
            high: TableWriter::create(db, rules, seeds, high, opts)?,
            partial: (Vec::new(), Vec::new()),
        })
    }

    /// Appends the next positions' low and high bytes, in index order.
    ///
    /// # Panics
    ///
    /// If `low` and `high` differ in length.
    pub fn append(&mut self, low: &[u8], high: &[u8]) -> Result<(), StoreError> {
        assert_eq!(low.len(), high.len(), "a low and a high byte a position");
        let block = self.low.opts.block_size as usize;
        let (mut low, mut high) = (low, high);
        if !self.partial.0.is_empty() {
            let take = (block - self.partial.0.len()).min(low.len());
            self.partial.0.extend_from_slice(&low[..take]);
            self.partial.1.extend_from_slice(&high[..take]);
            (low, high) = (&low[take..], &high[take..]);
            if self.partial.0.len() == block {
                let (l, h) = std::mem::take(&mut self.partial);
                self.write_blocks(&l, &h)?;
            }
        }
        let whole = low.len() / block * block;
        self.write_blocks(&low[..whole], &high[..whole])?;
        self.partial.0.extend_from_slice(&low[whole..]);
        self.partial.1.extend_from_slice(&high[whole..]);
        Ok(())
    }

    /// Compresses and writes whole blocks (the last of the layer may be short).
    fn write_blocks(&mut self, low: &[u8], high: &[u8]) -> Result<(), StoreError> {
        let opts = self.low.opts;
        let block = opts.block_size as usize;
        let low_blocks = compress_blocks(low, opts);
        // None: the high block is the low block.
        let high_blocks: Vec<Option<Vec<u8>>> = low
            .par_chunks(block)
            .zip(high.par_chunks(block))
            .map(|(l, h)| (l != h).then(|| zstd_contexts::compress(h, opts.zstd_level)))
            .collect();
        self.low.positions += low.len() as u64;
        self.low
            .write_compressed(low_blocks.iter().map(Vec::as_slice))?;
        self.high.positions += high.len() as u64;
        let out = self.high.out.as_mut().expect("open until finish");
        for (h, l) in high_blocks.iter().zip(&low_blocks) {
            match h {
                Some(h) => {
                    out.write_all(h).map_err(|e| StoreError::Io {
                        path: self.high.tmp.clone(),
                        source: e,
                    })?;
                    self.high.lens.push(h.len() as u64);
                    self.high.sums.push(xxh3_64(h));
                }
                None => {
                    self.high.shares = true;
                    self.high.lens.push(0);
                    self.high.sums.push(xxh3_64(l));
                }
            }
        }
        Ok(())
    }

    /// Writes both headers and renames the low file into place, then the high file.
    /// `summaries` are the low and the high ends' histograms.
    ///
    /// # Panics
    ///
    /// If the bytes appended are not exactly the layer's positions.
    pub fn finish(
        mut self,
        summaries: (LayerSummary, LayerSummary),
    ) -> Result<(WrittenLayer, WrittenLayer), StoreError> {
        let (l, h) = std::mem::take(&mut self.partial);
        if !l.is_empty() {
            self.write_blocks(&l, &h)?;
        }
        let low = self.low.finish(summaries.0)?;
        let high = self.high.finish(summaries.1)?;
        Ok((low, high))
    }
}

/// Writes the pair of tables of layer `seeds` ([`PairWriter`]) from the low and high bytes
/// of every position, in index order. A pair already there is replaced: its high file is
/// removed first, since the old high file may share blocks with the old low file (the layer
/// reads as incomplete until the new high file is in place).
///
/// # Errors
///
/// A file that cannot be removed, created, written or renamed.
///
/// # Panics
///
/// If `low` or `high` does not hold one byte for each position of the layer, or `high` is
/// not the high table of a pair.
#[allow(clippy::too_many_arguments)]
pub fn write_pair(
    db: &Path,
    rules: Rules,
    seeds: u32,
    high_kind: TableKind,
    low: &[u8],
    high: &[u8],
    summaries: (LayerSummary, LayerSummary),
    opts: WriteOptions,
) -> Result<(WrittenLayer, WrittenLayer), StoreError> {
    assert_eq!(low.len() as u64, index::size(seeds));
    let high_path = table_path(db, rules, seeds, high_kind);
    match fs::remove_file(&high_path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(StoreError::Io {
                path: high_path,
                source: e,
            })
        }
        _ => {}
    }
    let mut w = PairWriter::create(db, rules, seeds, high_kind, opts)?;
    w.append(low, high)?;
    w.finish(summaries)
}
