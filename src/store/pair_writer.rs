//! Writing the two tables of a pair (the bounds, or the own-row values) together, block by
//! block, the high table sharing the low table's blocks where they agree.

use super::context_coder::{block_counts, Counts, Model};
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
        Self::create_coded(db, rules, seeds, high, opts, None)
    }

    /// As [`PairWriter::create`], the files' blocks coded by `models` (the low file's and
    /// the high file's, under `opts.codec`), or by zstd where it is None.
    pub fn create_coded(
        db: &Path,
        rules: Rules,
        seeds: u32,
        high: TableKind,
        opts: WriteOptions,
        models: Option<(Model, Model)>,
    ) -> Result<PairWriter, StoreError> {
        let low = high.low_of_pair().expect("the high table of a pair");
        let (low_model, high_model) = models.unzip();
        Ok(PairWriter {
            low: TableWriter::create_coded(db, rules, seeds, low, opts, low_model)?,
            high: TableWriter::create_coded(db, rules, seeds, high, opts, high_model)?,
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
        let block = self.low.opts.block_size as usize;
        let (low_writer, high_writer) = (&self.low, &self.high);
        // None: the high block is the low block.
        let (low_blocks, high_blocks): (Vec<Vec<u8>>, Vec<Option<Vec<u8>>>) = low
            .par_chunks(block)
            .zip(high.par_chunks(block))
            .map(|(l, h)| {
                let own = (l != h).then(|| high_writer.encode_block(h));
                (low_writer.encode_block(l), own)
            })
            .unzip();
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
    let models = (opts.codec.has_model() && opts.codec.fits(high_kind)).then(|| {
        let (l, h) = pair_counts(seeds, low, high, opts.block_size);
        (Model::from_counts(&l), Model::from_counts(&h))
    });
    let mut w = PairWriter::create_coded(db, rules, seeds, high_kind, opts, models)?;
    w.append(low, high)?;
    w.finish(summaries)
}

/// The counts of a pair's models over `low` and `high` (the same positions, from a block's
/// start): every block of the low file, and the blocks of the high file it keeps itself,
/// those that are not the low file's.
pub(super) fn pair_counts(
    seeds: u32,
    low: &[u8],
    high: &[u8],
    block_size: u32,
) -> (Counts, Counts) {
    let size = block_size as usize;
    let own: Vec<u8> = low
        .chunks(size)
        .zip(high.chunks(size))
        .filter(|(l, h)| l != h)
        .flat_map(|(_, h)| h.iter().copied())
        .collect();
    (
        block_counts(seeds, low, block_size),
        block_counts(seeds, &own, block_size),
    )
}
