//! The lower layers, read from their files in sorted batches: the exits pass sorts a
//! slice's lookups by (layer, index), so each block it needs is read and decompressed once
//! for the slice, and only one block per thread is held at a time.

use crate::rules::Rules;
use crate::store::{self, LayerFile, StoreError, TableKind};
use rayon::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicI8, AtomicU64, Ordering::Relaxed};

use crate::rules::MAX_CAPTURE;

/// A capture takes at least 2 seeds (at most [`MAX_CAPTURE`]).
const MIN_CAPTURE: u32 = 2;

pub(crate) struct LowerFiles {
    /// By layer; None for layers no capture reaches. For the own-row pairs, the low file.
    files: Vec<Option<LayerFile>>,
    /// For the own-row pairs, by layer: the high file, or None where the layer is exact
    /// (every high block is its low block), so that only the low file is read.
    highs: Vec<Option<LayerFile>>,
    blocks_read: AtomicU64,
}

/// A lower layer's block read for a part of the lookups: its layer and number, the low
/// file's bytes, and the high file's where it has its own.
type CachedPair = (u32, u64, Vec<u8>, Option<Vec<u8>>);

/// Whether layer `m` is one a capture from layer `n` can reach.
fn reachable(n: u32, m: u32) -> bool {
    m + MIN_CAPTURE <= n && m + MAX_CAPTURE >= n
}

impl LowerFiles {
    /// Opens layers `n − 18 ..= n − 2` (header checked; blocks are checked as read).
    pub fn open(db: &Path, rules: Rules, n: u32) -> Result<LowerFiles, StoreError> {
        let mut files = Vec::new();
        for m in 0..n {
            files.push(if reachable(n, m) {
                let file = LayerFile::open(&store::layer_path(db, rules, m), rules, m)?;
                if file.dont_cares() {
                    // Restoring them would take random lookups of the layers below for
                    // each of the billions of exits: the lean pass reads plain values.
                    return Err(StoreError::Unusable {
                        path: file.path().to_path_buf(),
                        what: format!(
                            "its values keep don't-cares, which the lean pass does not read: \
                             recode layer {m} first (awari recode --codec ranks --layers {m})"
                        ),
                    });
                }
                Some(file)
            } else {
                None
            });
        }
        Ok(LowerFiles {
            files,
            highs: Vec::new(),
            blocks_read: AtomicU64::new(0),
        })
    }

    /// Opens the pairs of layers `n − 18 ..= n − 2` under `root` (the own-row folder),
    /// `high` naming their high table: a layer whose every position is exact is read from
    /// its low file alone.
    pub fn open_pairs(
        root: &Path,
        rules: Rules,
        n: u32,
        high: TableKind,
    ) -> Result<LowerFiles, StoreError> {
        let low = high.low_of_pair().expect("the high table of a pair");
        let (mut files, mut highs) = (Vec::new(), Vec::new());
        for m in 0..n {
            if !reachable(n, m) {
                files.push(None);
                highs.push(None);
                continue;
            }
            let open = |kind| {
                LayerFile::open_kind(&store::table_path(root, rules, m, kind), rules, m, kind)
            };
            let (l, h) = (open(low)?, open(high)?);
            let exact = (0..l.blocks()).try_fold(true, |all, b| {
                Ok::<_, StoreError>(all && l.same_block(&h, b)?)
            })?;
            files.push(Some(l));
            highs.push((!exact).then_some(h));
        }
        Ok(LowerFiles {
            files,
            highs,
            blocks_read: AtomicU64::new(0),
        })
    }

    /// Answers sorted lookups as [`LowerFiles::answer`], from the pairs opened by
    /// [`LowerFiles::open_pairs`]: each folds `captured − high(child)` into `w[slot]` (the
    /// exit of the position's `W` node) and `captured − low(child)` into `l[slot]` (its
    /// `L` node's).
    pub fn answer_pairs(
        &self,
        n: u32,
        lookups: &[u64],
        w: &[AtomicI8],
        l: &[AtomicI8],
    ) -> Result<(), StoreError> {
        let parts = (rayon::current_num_threads() * 4).max(1);
        let per_part = lookups.len().div_ceil(parts).max(1 << 12);
        lookups.par_chunks(per_part).try_for_each(|part| {
            // The block of the low file, and of the high file where it has its own.
            let mut cached: Option<CachedPair> = None;
            for &lookup in part {
                let m = (lookup >> 58) as u32;
                let idx = (lookup >> 20) & ((1 << 38) - 1);
                let slot = (lookup & ((1 << 20) - 1)) as usize;
                let file = self.files[m as usize]
                    .as_ref()
                    .expect("captures reach only the opened layers");
                let block_size = u64::from(file.block_size());
                let block = idx / block_size;
                let hit = matches!(&cached, Some((cm, cb, _, _)) if *cm == m && *cb == block);
                if !hit {
                    let low = file.read_block_bytes(block)?;
                    let high = match &self.highs[m as usize] {
                        Some(h) => Some(h.read_block_bytes(block)?),
                        None => None,
                    };
                    self.blocks_read.fetch_add(1, Relaxed);
                    cached = Some((m, block, low, high));
                }
                let (_, _, low, high) = cached.as_ref().expect("just filled");
                let at = (idx % block_size) as usize;
                let low = low[at] as i8;
                let high = high.as_ref().map_or(low, |h| h[at] as i8);
                let captured = (n - m) as i8;
                w[slot].fetch_max(captured - high, Relaxed);
                l[slot].fetch_max(captured - low, Relaxed);
            }
            Ok(())
        })
    }

    /// Answers sorted lookups (`layer << 58 | index << 20 | slot`, see the exits pass):
    /// each folds `captured − value(child)` into the best exit of its slot. The lookups
    /// are split into parts, one per task; a part reads each block it needs once.
    pub fn answer(&self, n: u32, lookups: &[u64], exits: &[AtomicI8]) -> Result<(), StoreError> {
        let parts = (rayon::current_num_threads() * 4).max(1);
        let per_part = lookups.len().div_ceil(parts).max(1 << 12);
        lookups.par_chunks(per_part).try_for_each(|part| {
            let mut cached: Option<(u32, u64, Vec<u8>)> = None;
            for &l in part {
                let m = (l >> 58) as u32;
                let idx = (l >> 20) & ((1 << 38) - 1);
                let slot = (l & ((1 << 20) - 1)) as usize;
                let file = self.files[m as usize]
                    .as_ref()
                    .expect("captures reach only the opened layers");
                let block_size = u64::from(file.block_size());
                let block = idx / block_size;
                let hit = matches!(&cached, Some((cm, cb, _)) if *cm == m && *cb == block);
                if !hit {
                    let bytes = file.read_block_bytes(block)?;
                    self.blocks_read.fetch_add(1, Relaxed);
                    cached = Some((m, block, bytes));
                }
                let bytes = &cached.as_ref().expect("just filled").2;
                let value = bytes[(idx % block_size) as usize] as i8;
                let exit = (n - m) as i8 - value;
                exits[slot].fetch_max(exit, Relaxed);
            }
            Ok(())
        })
    }

    pub fn blocks_read(&self) -> u64 {
        self.blocks_read.load(Relaxed)
    }

    pub fn blocks_total(&self) -> u64 {
        self.files.iter().flatten().map(LayerFile::blocks).sum()
    }
}
