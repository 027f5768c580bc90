//! Layer files: one file per layer per rule set, `DIR/<rules>/layer-NN.awdb`.
//!
//! # Format (version 1, little-endian)
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | magic `AWARIDB\0` |
//! | 8 | 4 | format version |
//! | 12 | 1 | rules code ([`Rules::code`]) |
//! | 13 | 1 | index kind (1: every placement, stars and bars) |
//! | 14 | 1 | compression (1: zstd) |
//! | 15 | 1 | value encoding (1: one `i8` per position) |
//! | 16 | 4 | seeds on the board (the layer) |
//! | 20 | 4 | positions per block |
//! | 24 | 8 | positions |
//! | 32 | 8 | blocks |
//! | 40 | 97 × 8 | histogram: positions at each value −48..=48 |
//! | 816 | 8 × (blocks + 1) | block offsets from the start of the file; the last is the file length |
//! | … | 8 × blocks | xxh3-64 of each compressed block |
//! | … | 8 | xxh3-64 of everything above: the header checksum |
//! | … | | the compressed blocks |
//!
//! The header checksum covers every block checksum, so it stands for the whole file:
//! opening a file checks the header (cheap), and each block is checked when it is read.
//! A file is written under a temporary name and renamed when complete, so a file with the
//! final name is always whole.

mod reader;
mod writer;

pub use reader::LayerFile;
pub use writer::{write_layer, WriteOptions, WrittenLayer};

use crate::board::MAX_SEEDS;
use crate::rules::Rules;
use std::path::{Path, PathBuf};

pub const MAGIC: [u8; 8] = *b"AWARIDB\0";
pub const VERSION: u32 = 1;
pub const INDEX_FULL: u8 = 1;
pub const COMPRESSION_ZSTD: u8 = 1;
pub const ENCODING_I8: u8 = 1;
/// Histogram buckets: values −48..=48.
pub const HISTOGRAM_LEN: usize = 2 * MAX_SEEDS as usize + 1;
/// Bytes before the block table.
pub const FIXED_HEADER: usize = 40 + 8 * HISTOGRAM_LEN;
/// Default positions per block: see the README for the measurements behind it.
pub const DEFAULT_BLOCK: u32 = 1 << 14;

/// Why a layer file was refused.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not an awari database file")]
    NotADatabase { path: PathBuf },
    #[error("{path}: format version {found}, this program reads version {VERSION}")]
    Version { path: PathBuf, found: u32 },
    #[error("{path}: built for rules '{found}', expected '{expected}'")]
    WrongRules {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("{path}: holds layer {found}, expected layer {expected}")]
    WrongLayer {
        path: PathBuf,
        expected: u32,
        found: u32,
    },
    #[error("{path}: truncated ({found} bytes, the header says {expected})")]
    Truncated {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    #[error("{path}: corrupted ({what})")]
    Corrupted { path: PathBuf, what: String },
}

/// The histogram slot of value `v` (values −48..=48).
#[inline]
pub fn histogram_bucket(v: i8) -> usize {
    (i32::from(v) + MAX_SEEDS as i32) as usize
}

/// A layer's summary, as stored in its header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerSummary {
    pub seeds: u32,
    pub positions: u64,
    /// Positions at each value, `histogram[v + 48]` for value `v`.
    pub histogram: [u64; HISTOGRAM_LEN],
}

impl LayerSummary {
    pub fn from_values(seeds: u32, values: &[i8]) -> LayerSummary {
        let mut histogram = [0u64; HISTOGRAM_LEN];
        for &v in values {
            histogram[histogram_bucket(v)] += 1;
        }
        LayerSummary {
            seeds,
            positions: values.len() as u64,
            histogram,
        }
    }
    /// Positions with value `v`.
    pub fn count(&self, v: i32) -> u64 {
        self.histogram[(v + MAX_SEEDS as i32) as usize]
    }
    /// Positions the side to move wins (value > 0).
    pub fn wins(&self) -> u64 {
        self.histogram[MAX_SEEDS as usize + 1..].iter().sum()
    }
    /// Positions with value 0.
    pub fn draws(&self) -> u64 {
        self.histogram[MAX_SEEDS as usize]
    }
    /// Positions the side to move loses (value < 0).
    pub fn losses(&self) -> u64 {
        self.histogram[..MAX_SEEDS as usize].iter().sum()
    }
}

/// The folder of one rule set's layers.
pub fn rules_dir(db: &Path, rules: Rules) -> PathBuf {
    db.join(rules.name())
}

/// The file of one layer.
pub fn layer_path(db: &Path, rules: Rules, seeds: u32) -> PathBuf {
    rules_dir(db, rules).join(format!("layer-{seeds:02}.awdb"))
}
