//! Table files: per layer per rule set, the values `DIR/<rules>/layer-NN.awdb` and the
//! distances `DIR/<rules>/layer-NN.awdz` ([`TableKind`]), in one format.
//!
//! # Format (versions 1 and 2, little-endian)
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | magic `AWARIDB\0` |
//! | 8 | 4 | format version |
//! | 12 | 1 | rules code ([`Rules::code`]) |
//! | 13 | 1 | index kind (1: every placement, stars and bars) |
//! | 14 | 1 | compression (1: zstd; 0: no entries and no blocks, only for a distances table; 2: zstd, a block of length 0 being the low file's, only for the high file of a pair; 3: the values' context model, format version 2, the model between the header and the first block; 4: the same over values with don't-cares, four streams a block, read only through a `Database`) |
//! | 15 | 1 | table kind (1: values, one `i8` a position; 2: distances, one `u8`; 3 and 4: the low and high bounds, one `i8` each) |
//! | 16 | 4 | seeds on the board (the layer) |
//! | 20 | 4 | positions per block |
//! | 24 | 8 | positions |
//! | 32 | 8 | blocks |
//! | 40 | 97 × 8 | histogram: positions at each value −48..=48 (of the values, in both kinds) |
//! | 816 | 8 × (blocks + 1) | block offsets from the start of the file; the last is the file length |
//! | … | 8 × blocks | xxh3-64 of each compressed block |
//! | … | 8 | xxh3-64 of everything above: the header checksum |
//! | … | | the compressed blocks |
//!
//! The header checksum covers every block checksum, so it stands for the whole file:
//! opening a file checks the header (cheap), and each block is checked when it is read.
//! A file is written under a temporary name and renamed when complete, so a file with the
//! final name is always whole. The offsets are named, and the header written and read, in
//! one place (`header.rs`).

mod cache;
mod context_coder;
mod files;
mod header;
mod pair_writer;
mod ranked;
mod reader;
mod recode;
pub(crate) mod varint;
mod writer;
pub(crate) mod zstd_contexts;

pub(crate) use cache::{BlockCache, CACHE_BYTES};
pub use context_coder::Codec;
pub(crate) use pair_writer::{write_pair, PairWriter};
pub use reader::LayerFile;
pub use recode::{recode_layer, recode_pair};
pub(crate) use writer::{compress_blocks, write_dont_cares, write_without_entries, TableWriter};
pub use writer::{write_layer, write_table, WriteOptions, WrittenLayer};

use crate::board::MAX_SEEDS;
use crate::rules::{Repetition, Rules};
use std::path::{Path, PathBuf};

pub use header::{FIXED_LEN as FIXED_HEADER, MAGIC, VERSION};

/// Histogram buckets: values −48..=48.
pub(crate) const HISTOGRAM_LEN: usize = 2 * MAX_SEEDS as usize + 1;
/// Default positions per block: docs/format.md ("Block size and encoding") has the
/// measurements behind it.
pub const DEFAULT_BLOCK: u32 = 1 << 14;
/// Positions per block for values coded by their context model ([`Codec::Context`]): its
/// blocks decode about four times slower than zstd's, so a quarter of the size keeps a
/// cold probe where zstd's is (docs/format.md).
pub const CONTEXT_BLOCK: u32 = 1 << 12;

/// What a table file holds, one byte per position (the header's encoding byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TableKind {
    /// `layer-NN.awdb`: the value of each position, an `i8` in `−n..=n`.
    Values,
    /// `layer-NN.awdz`: the round of the retrograde pass in which each position's value
    /// was settled (0 for endless play), capped at [`DISTANCE_SATURATED`]. A best move of
    /// a won position leads to a position of a lower round or captures, and so does every
    /// best move of a lost position: following the rounds down makes progress, as the
    /// distances of a Syzygy DTZ table do.
    Distances,
    /// `layer-NN.awlo`, under the bounds folder ([`bounds_dir`]; see
    /// [`crate::probe::BoundsDatabase`]): `low(P)`, what P's mover is guaranteed when a
    /// cycle ends with each side keeping its own row, an `i8` in `−n..=n`; its header
    /// histogram counts the low values.
    BoundsLow,
    /// `layer-NN.awhi`, beside it: `high(P)`, the most P's opponent can be held to, as
    /// above; its header histogram counts the high values.
    BoundsHigh,
    /// `layer-NN.r2lo` (`r3lo` when the third occurrence ends the game), beside the
    /// bounds: the low end of the own-row value of each position with an empty history
    /// ([`crate::solve::own_row`]), an `i8` in `−n..=n`; equal to the high end where the
    /// value is proved.
    OwnRowLow(Repetition),
    /// `layer-NN.r2hi` (`r3hi`), beside it: the high end.
    OwnRowHigh(Repetition),
}

/// The stored round of a position settled in this round or any later one.
pub const DISTANCE_SATURATED: u8 = u8::MAX;

impl TableKind {
    /// The header's encoding byte.
    pub(crate) fn code(self) -> u8 {
        match self {
            TableKind::Values => 1,
            TableKind::Distances => 2,
            TableKind::BoundsLow => 3,
            TableKind::BoundsHigh => 4,
            TableKind::OwnRowLow(Repetition::First) => 5,
            TableKind::OwnRowHigh(Repetition::First) => 6,
            TableKind::OwnRowLow(Repetition::Third) => 7,
            TableKind::OwnRowHigh(Repetition::Third) => 8,
        }
    }
    /// The file name extension.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            TableKind::Values => "awdb",
            TableKind::Distances => "awdz",
            TableKind::BoundsLow => "awlo",
            TableKind::BoundsHigh => "awhi",
            TableKind::OwnRowLow(Repetition::First) => "r2lo",
            TableKind::OwnRowHigh(Repetition::First) => "r2hi",
            TableKind::OwnRowLow(Repetition::Third) => "r3lo",
            TableKind::OwnRowHigh(Repetition::Third) => "r3hi",
        }
    }
    /// The low file's kind of a pair's high file (the bounds' or the own-row values'),
    /// whose blocks the high file may share (compression code 2, `COMPRESSION_SHARED`);
    /// None for any other kind.
    pub(crate) fn low_of_pair(self) -> Option<TableKind> {
        match self {
            TableKind::BoundsHigh => Some(TableKind::BoundsLow),
            TableKind::OwnRowHigh(r) => Some(TableKind::OwnRowLow(r)),
            _ => None,
        }
    }
    /// Whether `byte` can be stored at a position of layer `seeds`. It depends only on the
    /// byte's magnitude as an `i8`: reading a block checks its largest one alone.
    pub(crate) fn holds(self, seeds: u32, byte: u8) -> bool {
        match self {
            TableKind::Values
            | TableKind::BoundsLow
            | TableKind::BoundsHigh
            | TableKind::OwnRowLow(_)
            | TableKind::OwnRowHigh(_) => (byte as i8).unsigned_abs() as u32 <= seeds,
            TableKind::Distances => true,
        }
    }
}

/// Why a layer file was refused.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The operating system refused a read or a write; `source` says why.
    #[error("{path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A directory, a FIFO, a device: never opened, since reading one could block.
    #[error("{path}: not a regular file")]
    NotAFile {
        /// The file.
        path: PathBuf,
    },
    /// Not a table file at all.
    #[error("{path}: not an awari database file")]
    NotADatabase {
        /// The file.
        path: PathBuf,
    },
    /// Another format version.
    #[error(
        "{path}: format version {found}, this program reads version {}",
        header::VERSION
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// Built for another rule set.
    #[error("{path}: built for rules '{found}', expected '{expected}'")]
    WrongRules {
        /// The file.
        path: PathBuf,
        /// The rule set asked for.
        expected: String,
        /// The rule set in the file.
        found: String,
    },
    /// Holds another layer.
    #[error("{path}: holds layer {found}, expected layer {expected}")]
    WrongLayer {
        /// The file.
        path: PathBuf,
        /// The layer asked for.
        expected: u32,
        /// The layer in the file.
        found: u32,
    },
    /// Shorter than its header says.
    #[error("{path}: truncated ({found} bytes, the header says {expected})")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Bytes expected.
        expected: u64,
        /// Bytes found.
        found: u64,
    },
    /// A sound file that this build cannot use as asked (a lean checkpoint saved by a
    /// build with other settings); `what` says what to do.
    #[error("{path}: {what}")]
    Unusable {
        /// The file.
        path: PathBuf,
        /// Why, and what to do.
        what: String,
    },
    /// A lean pass's checkpoint (`path`) of a layer started without its distances, asked
    /// to resume with them: the rounds it dropped cannot be had back. Resume it without
    /// them, or remove its folder to build the layer from the start.
    #[error(
        "{path}: layer {seeds} was started without its distances; resume it without them, or remove the folder {} to build the layer from the start",
        .path.parent().unwrap_or(.path).display()
    )]
    StartedWithoutDistances {
        /// The checkpoint.
        path: PathBuf,
        /// The layer.
        seeds: u32,
    },
    /// The work that was writing or reading in `path` was asked to stop
    /// ([`crate::SolveObserver::cancelled`]): nothing of it was written (the lean pass's
    /// scratch folder `path` keeps its last checkpoint).
    #[error("{path}: stopped as asked")]
    Stopped {
        /// The folder of the work that stopped.
        path: PathBuf,
    },
    /// A checksum, a size or a stored byte is wrong.
    #[error("{path}: corrupted ({what})")]
    Corrupted {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
}

impl StoreError {
    /// Whether the file itself is bad (damaged, foreign, of another layer or rule set), as
    /// opposed to the system refusing to read it or a sound file of other settings.
    pub fn is_damage(&self) -> bool {
        !matches!(
            self,
            StoreError::Io { .. }
                | StoreError::NotAFile { .. }
                | StoreError::Unusable { .. }
                | StoreError::StartedWithoutDistances { .. }
                | StoreError::Stopped { .. }
        )
    }
}

/// Where a layer stands on disk, as [`layer_state`] finds it.
#[derive(Debug)]
pub enum LayerState {
    /// No marker file ([`Tables::marker`]): the layer was never finished.
    Missing,
    /// A marker file, but a table a finished layer also has is missing or damaged: the
    /// layer must be built again.
    Incomplete(Incomplete),
    /// The marker file and every other table a finished layer has (see [`layer_state`]
    /// for what is checked; of the marker file only the header, the rest is left to its
    /// reader, which checks each block as it reads).
    Complete,
}

/// Why a layer with its marker file is not complete.
#[derive(Debug, thiserror::Error)]
pub enum Incomplete {
    /// A table is not there.
    #[error("{}: missing", path.display())]
    Missing {
        /// What it holds.
        kind: TableKind,
        /// Where it should be.
        path: PathBuf,
    },
    /// A table is there but damaged (its header, a block checksum, its layer or rules).
    #[error(transparent)]
    Damaged(StoreError),
}

/// A kind of tables a database holds, one set of files a layer: the list every part of
/// the pipeline takes its kind from (build, probe, verify, the command line). Adding a kind
/// means a variant here, its files ([`TableKind`]), its solver and its answer type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Tables {
    /// The value of every position, with its distance (endless play shares the seeds).
    #[default]
    Values,
    /// The pair of guaranteed bounds of every position, when endless play ends with each
    /// side keeping its own row ([`crate::probe::BoundsDatabase`]).
    Bounds,
    /// The value of every position with an empty history (the opening, or just after a
    /// capture) when a repetition ends the game with each side keeping its own row, or
    /// the interval proved where the search ran out of its budget
    /// ([`crate::build::BuildOptions::search_budget`]). Beside the bounds, in the same
    /// folder.
    OwnRow(Repetition),
}

impl Tables {
    /// Every kind, in the order the command line lists them.
    pub const ALL: [Tables; 4] = [
        Tables::Values,
        Tables::Bounds,
        Tables::OwnRow(Repetition::First),
        Tables::OwnRow(Repetition::Third),
    ];

    /// The kind's name, as the command line's `--cycles`, the web API's `cycles=` and the
    /// Python package's `cycles` spell it: `share` (the values: endless play shares the
    /// seeds left), `bounds`, `own-row-first`, `own-row-third`. The one place these names
    /// are written; [`Tables::from_str`](std::str::FromStr) reads them back.
    pub fn name(self) -> &'static str {
        match self {
            Tables::Values => "share",
            Tables::Bounds => "bounds",
            Tables::OwnRow(Repetition::First) => "own-row-first",
            Tables::OwnRow(Repetition::Third) => "own-row-third",
        }
    }

    /// The file whose presence marks a layer finished: it is written last.
    pub fn marker(self) -> TableKind {
        match self {
            Tables::Values => TableKind::Values,
            Tables::Bounds => TableKind::BoundsHigh,
            Tables::OwnRow(r) => TableKind::OwnRowHigh(r),
        }
    }

    /// The file written before the marker, which a finished layer has beside it: the
    /// distances of the values, the low half of a pair. This and [`layer_state`] are the
    /// one place that says what a complete layer is: `build` rebuilds a layer that lacks
    /// it, `verify` fails it. (A principal variation without the distances must search,
    /// which can take minutes on a large layer, so they are part of every values layer.)
    pub fn companion(self) -> TableKind {
        match self {
            Tables::Values => TableKind::Distances,
            Tables::Bounds => TableKind::BoundsLow,
            Tables::OwnRow(r) => TableKind::OwnRowLow(r),
        }
    }

    /// Whether a layer holds a pair per position, low (the companion) then high (the
    /// marker), rather than one value.
    pub fn is_pair(self) -> bool {
        self != Tables::Values
    }

    /// The folder under the database folder `db` that holds this kind's rule-set folders:
    /// `db` itself for the values, [`bounds_dir`] for the others.
    pub fn root(self, db: &Path) -> PathBuf {
        match self {
            Tables::Values => db.to_path_buf(),
            Tables::Bounds | Tables::OwnRow(_) => bounds_dir(db),
        }
    }

    /// What a layer of this kind is called in messages: "layer", "bounds layer",
    /// "own-row (first repetition) layer".
    pub fn layer_name(self) -> String {
        match self {
            Tables::Values => "layer".to_string(),
            Tables::Bounds => "bounds layer".to_string(),
            Tables::OwnRow(r) => format!("own-row ({} repetition) layer", r.name()),
        }
    }
}

impl std::fmt::Display for Tables {
    /// The kind's name ([`Tables::name`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a kind's ([`Tables::name`]): the text given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TablesError(pub String);

impl std::fmt::Display for TablesError {
    /// "cycles must be 'share', 'bounds', 'own-row-first' or 'own-row-third', not \"x\"".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = Tables::ALL.iter().map(|t| format!("'{t}'")).collect();
        let (last, rest) = names.split_last().expect("four kinds");
        write!(
            f,
            "cycles must be {} or {last}, not {:?}",
            rest.join(", "),
            self.0
        )
    }
}

impl std::error::Error for TablesError {}

impl std::str::FromStr for Tables {
    type Err = TablesError;
    /// The kind named `name` exactly ([`Tables::name`]).
    fn from_str(name: &str) -> Result<Tables, TablesError> {
        Tables::ALL
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| TablesError(name.to_string()))
    }
}

/// Whether layer `seeds` of `rules` under `db` is finished, for tables of kind `tables`:
/// its marker file ([`Tables::marker`]) present with a sound header, and its companion
/// ([`Tables::companion`]) present. The values' companion, the distances, is
/// checked whole (header and every block checksum), since a damaged distances file is
/// rebuilt beside sound values; the low half of a pair is checked when the build reads it
/// back, as the whole pair is.
///
/// # Errors
///
/// The marker file damaged, foreign or unreadable (whatever its companions, it is not
/// silently replaced), or the system refusing to read a companion table
/// ([`StoreError::Io`], or [`StoreError::NotAFile`] for a directory or FIFO in its place):
/// that file may be fine, so it is not called damaged.
pub fn layer_state(
    db: &Path,
    rules: Rules,
    tables: Tables,
    seeds: u32,
) -> Result<LayerState, StoreError> {
    let root = tables.root(db);
    let marker = table_path(&root, rules, seeds, tables.marker());
    // This does not open the file, so a FIFO cannot block here.
    if !marker.exists() {
        return Ok(LayerState::Missing);
    }
    let kind = tables.companion();
    let path = table_path(&root, rules, seeds, kind);
    let companion_missing = || -> Result<Option<LayerState>, StoreError> {
        // (A link that leads nowhere is not missing: opening it says what it is.)
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Some(LayerState::Incomplete(Incomplete::Missing {
                    kind,
                    path: path.clone(),
                })))
            }
            Err(e) => Err(StoreError::Io {
                path: path.clone(),
                source: e,
            }),
            Ok(_) => Ok(None),
        }
    };
    // A pair's high file may share the blocks of its low file, the companion, and opens
    // it: a missing low file is named as such first.
    if tables.is_pair() {
        if let Some(missing) = companion_missing()? {
            return Ok(missing);
        }
        LayerFile::open_kind(&marker, rules, seeds, tables.marker())?;
        return Ok(LayerState::Complete);
    }
    LayerFile::open_kind(&marker, rules, seeds, tables.marker())?;
    if let Some(missing) = companion_missing()? {
        return Ok(missing);
    }
    let checked =
        LayerFile::open_kind(&path, rules, seeds, kind).and_then(|file| file.check_blocks());
    match checked {
        Ok(()) => Ok(LayerState::Complete),
        Err(e) if e.is_damage() => Ok(LayerState::Incomplete(Incomplete::Damaged(e))),
        Err(e) => Err(e),
    }
}

/// The histogram slot of value `v` (values −48..=48).
#[inline]
pub(crate) fn histogram_bucket(v: i8) -> usize {
    (i32::from(v) + MAX_SEEDS as i32) as usize
}

/// A layer's summary, as stored in its header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerSummary {
    /// The layer.
    pub seeds: u32,
    /// Positions in it.
    pub positions: u64,
    /// Positions at each value, `histogram[v + 48]` for value `v`.
    pub histogram: [u64; HISTOGRAM_LEN],
}

impl LayerSummary {
    /// The summary of a layer's values.
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

/// The subfolder of a database folder that holds the bounds tables. Its name is that of
/// the cycle rule the bounds answer ("each side keeps its own row"): files already built
/// are found where they are.
pub const BOUNDS_SUBDIR: &str = "own-row";

/// The folder under which the bounds tables of `db` live (one subfolder per rule set), as
/// the values live under `db` itself.
pub fn bounds_dir(db: &Path) -> PathBuf {
    db.join(BOUNDS_SUBDIR)
}

/// The folder of one rule set's layers.
pub fn rules_dir(db: &Path, rules: Rules) -> PathBuf {
    db.join(rules.name())
}

/// The values file of one layer.
pub fn layer_path(db: &Path, rules: Rules, seeds: u32) -> PathBuf {
    table_path(db, rules, seeds, TableKind::Values)
}

/// Where the table of `kind` is written before it is renamed into place.
pub fn temporary_path(db: &Path, rules: Rules, seeds: u32, kind: TableKind) -> PathBuf {
    table_path(db, rules, seeds, kind).with_extension(format!("{}.tmp", kind.extension()))
}

/// Checks that a folder of tables is a folder, or absent: a folder that is there but cannot
/// be reached (a symbolic link loop, a link through a file) is an error that says why, not
/// "no layers". An absent folder is fine: its layers are simply not built.
///
/// # Errors
///
/// [`StoreError::Io`] with the system's reason.
pub fn check_folder(dir: &Path) -> Result<(), StoreError> {
    match std::fs::metadata(dir) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(StoreError::Io {
            path: dir.to_path_buf(),
            source,
        }),
    }
}

/// A path as one word of a shell command, for the commands that error messages suggest: as
/// it is when the shell reads it so, else in single quotes (a quote inside written `'\''`),
/// so that a suggested command works when pasted even for a folder with a space in its name.
pub fn shell_word(path: &Path) -> String {
    let text = path.to_string_lossy();
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:=@%".contains(&b));
    if plain {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The file of one layer's table of `kind`.
pub fn table_path(db: &Path, rules: Rules, seeds: u32, kind: TableKind) -> PathBuf {
    rules_dir(db, rules).join(format!("layer-{seeds:02}.{}", kind.extension()))
}
