//! The lower layers, read from their files in sorted batches: the exits pass sorts a
//! slice's lookups by (layer, index), so each block it needs is read and decompressed once
//! for the slice, and only one block per thread is held at a time.

use crate::rules::Rules;
use crate::store::{self, LayerFile, StoreError};
use rayon::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicI8, AtomicU64, Ordering::Relaxed};

/// A capture takes at most 18 seeds (six pits of three), at least 2.
const MAX_CAPTURE: u32 = 18;
const MIN_CAPTURE: u32 = 2;

pub(crate) struct LowerFiles {
    /// By layer; None for layers no capture reaches.
    files: Vec<Option<LayerFile>>,
    blocks_read: AtomicU64,
}

impl LowerFiles {
    /// Opens layers `n − 18 ..= n − 2` (header checked; blocks are checked as read).
    pub fn open(db: &Path, rules: Rules, n: u32) -> Result<LowerFiles, StoreError> {
        let mut files = Vec::new();
        for m in 0..n {
            let reachable = m + MIN_CAPTURE <= n && m + MAX_CAPTURE >= n;
            files.push(if reachable {
                Some(LayerFile::open(&store::layer_path(db, rules, m), rules, m)?)
            } else {
                None
            });
        }
        Ok(LowerFiles {
            files,
            blocks_read: AtomicU64::new(0),
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
