//! Answering questions from the databases: values, moves with their values, best moves,
//! principal variations and game outcomes; and the same questions of the bounds tables
//! ([`BoundsDatabase`]), which hold a pair of guaranteed bounds where the values hold one
//! value, and of the own-row values beside them ([`OwnRowTables`], one repetition rule's,
//! with a game's history). Every kind reads its blocks through one kind of block cache;
//! the values' layers may also be held whole in memory (`loaded.rs`).
//!
//! ```no_run
//! use awari::{Board, Database, Rules};
//!
//! let db = Database::open("data/db", Rules::AWARI)?;
//! let board: Board = "1 1 1 1 1 2 4 2 3 0 0 0".parse()?;
//! println!("value {}", db.value(&board)?);
//! for m in db.best_moves(&board)? {
//!     println!("play pit {} (captures {}, value {})", m.pit + 1, m.captured, m.value);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bounds;
mod dont_cares;
pub(crate) use dont_cares::{check_restored, held_values, restore_layer};
mod loaded;
mod own_row;
mod pv;
mod tables;

pub use crate::solve::own_row::Proof;
pub use bounds::{Bounds, BoundsDatabase, BoundsVariation, MoveBounds};
pub use own_row::{own_row_history, OwnRowAnswer, OwnRowMove, OwnRowTables};

use crate::board::{Board, MAX_SEEDS};
use crate::index;
use crate::rules::Rules;
use crate::store::{self, BlockCache, LayerFile, StoreError, Tables, CACHE_BYTES};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use tables::{Access, LayerSet};

/// Why a probe failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The layer of the board is not built, in the tables of kind `tables`.
    #[error("{} {seeds} ({seeds} seeds on the board) of rules '{rules}' is not built in {}", tables.layer_name(), dir.display())]
    LayerMissing {
        /// The kind of tables it is missing from.
        tables: Tables,
        /// The layer.
        seeds: u32,
        /// The rule set.
        rules: Rules,
        /// The database folder (for the bounds and own-row values, the parent of their
        /// folder, as for the values).
        dir: PathBuf,
    },
    /// A history that cannot come before the position under the own-row rule (another
    /// number of seeds, a position already repeated to the end, an illegal move).
    #[error("history: {0}")]
    History(String),
    /// A principal variation needs the distances of a layer that has its values but no
    /// distances file: the layer is incomplete, and working the distances out by a search
    /// can take minutes.
    #[error("layer {seeds} of rules '{rules}' has no distances file ({}), which a principal variation needs to steer best play to its capture", path.display())]
    DistancesMissing {
        /// The layer.
        seeds: u32,
        /// The rule set.
        rules: Rules,
        /// The missing file.
        path: PathBuf,
        /// The database folder.
        dir: PathBuf,
    },
    /// A file could not be read, or is damaged.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ProbeError {
    /// The message with its remedy, the `awari build` command that makes what is missing,
    /// for the command line and the Python package to say alike: for a missing layer
    /// "…; run: awari build …" (with `--cycles` for tables other than the values), for a
    /// layer without its distances "…; build the layer again: awari build …", the database
    /// folder as one word of a shell command ([`store::shell_word`]). `None` for an error
    /// that a build does not mend.
    pub fn with_build_command(&self) -> Option<String> {
        let command = |tables: Tables, rules: Rules, seeds: u32, dir: &Path| {
            let cycles = if tables == Tables::default() {
                String::new()
            } else {
                format!(" --cycles {tables}")
            };
            format!(
                "awari build{cycles} --rules {rules} --max-seeds {seeds} --db {}",
                store::shell_word(dir)
            )
        };
        match self {
            ProbeError::LayerMissing {
                tables,
                seeds,
                rules,
                dir,
            } => Some(format!(
                "{self}; run: {}",
                command(*tables, *rules, *seeds, dir)
            )),
            ProbeError::DistancesMissing {
                seeds, rules, dir, ..
            } => Some(format!(
                "{self}; build the layer again: {}",
                command(Tables::Values, *rules, *seeds, dir)
            )),
            ProbeError::Store(_) | ProbeError::History(_) => None,
        }
    }
}

/// One legal move and what it is worth to the mover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// The mover's pit, 0..=5.
    pub pit: u8,
    /// Seeds the move captures.
    pub captured: u8,
    /// The position after the move, from the opponent's side.
    pub child: Board,
    /// `captured − value(child)`: the seed difference the mover gets by playing it.
    pub value: i8,
}

/// Win, draw or loss, for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The side to move wins.
    Win,
    /// Neither side wins.
    Draw,
    /// The side to move loses.
    Loss,
}

impl Verdict {
    /// The verdict of a final seed difference (the mover's seeds minus the opponent's).
    pub fn of_difference(d: i32) -> Verdict {
        match d.signum() {
            1 => Verdict::Win,
            0 => Verdict::Draw,
            _ => Verdict::Loss,
        }
    }
    /// `"win"`, `"draw"` or `"loss"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Win => "win",
            Verdict::Draw => "draw",
            Verdict::Loss => "loss",
        }
    }
}

/// The end of a game in progress under perfect play.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Who wins.
    pub verdict: Verdict,
    /// Final score of the side to move (halves when endless play shares an odd count).
    pub mover_score: f64,
    /// Final score of the opponent.
    pub opponent_score: f64,
}

/// The outcome of a game whose board has value `value` with `seeds` on it, when the mover
/// and the opponent have already captured `mover_captured` and `opponent_captured`.
pub fn outcome(value: i8, seeds: u32, mover_captured: u32, opponent_captured: u32) -> Outcome {
    let v = f64::from(value);
    let n = f64::from(seeds);
    let mover = f64::from(mover_captured) + (n + v) / 2.0;
    let opponent = f64::from(opponent_captured) + (n - v) / 2.0;
    Outcome {
        verdict: Verdict::of_difference(
            mover_captured as i32 + i32::from(value) - opponent_captured as i32,
        ),
        mover_score: mover,
        opponent_score: opponent,
    }
}

/// One step of a principal variation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PvStep {
    /// The position before the move, from its mover's side.
    pub board: Board,
    /// Its value.
    pub value: i8,
    /// The best move played (see [`Database::principal_variation`] for the choice among
    /// equal best moves).
    pub pit: u8,
    /// Seeds it captures.
    pub captured: u8,
}

/// How a principal variation stops, of the values ([`PrincipalVariation`]) or of the
/// bounds ([`BoundsVariation`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PvEnd {
    /// The game is over in the final position.
    GameOver {
        /// The mover's end value there.
        value: i8,
    },
    /// The final position already occurred: perfect play goes round for ever (of the
    /// values, the seeds left are then shared; of the bounds, each side keeps its own row,
    /// [`BoundsVariation::repetition_score`]).
    Repetition,
    /// The length limit was reached.
    Limit,
}

/// A principal variation: the moves, the final position (from its mover's side) and why it
/// stops there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrincipalVariation {
    /// The moves, in order.
    pub steps: Vec<PvStep>,
    /// The position after the last move, from its mover's side.
    pub last: Board,
    /// Why the variation stops there.
    pub end: PvEnd,
}

/// Bits of a packed (layer, index) key that hold the index: the largest layer (48 seeds)
/// has C(59, 11) < 2^42 positions.
const INDEX_BITS: u32 = 42;

/// A layer and an index in one integer that sorts as the pair does.
#[inline]
fn pack(seeds: u32, idx: u64) -> u64 {
    debug_assert!(idx < 1 << INDEX_BITS);
    (u64::from(seeds) << INDEX_BITS) | idx
}

#[inline]
fn unpack(key: u64) -> (u32, u64) {
    ((key >> INDEX_BITS) as u32, key & ((1 << INDEX_BITS) - 1))
}

/// Many boards' lookups in block order: each board's key (layer and index packed,
/// [`pack`]) with where its answer goes, sorted so that a block's lookups are adjacent (16
/// bytes an entry, ranked and sorted in parallel: with 24-byte tuples ranked on one thread
/// these were a fifth of a million random boards' time), and cut into one run a block of
/// the layer's file (`block_size(seeds)` positions a block), each run found by bisection.
/// A run's first key names its layer and block ([`block_of_key`]).
pub(crate) fn by_block(
    boards: &[Board],
    block_size: impl Fn(u32) -> u32,
) -> (Vec<(u64, usize)>, Vec<std::ops::Range<usize>>) {
    let mut keys: Vec<(u64, usize)> = boards
        .par_iter()
        .enumerate()
        .map(|(at, b)| (pack(b.seeds(), index::rank(b)), at))
        .collect();
    keys.par_sort_unstable_by_key(|&(key, _)| key);
    let mut runs = Vec::new();
    let mut start = 0;
    while let Some(&(key, _)) = keys.get(start) {
        // The keys below the next block's first position.
        let (seeds, block) = block_of_key(key, &block_size);
        let end = pack(seeds, (block + 1) * u64::from(block_size(seeds)));
        let len = keys[start..].partition_point(|&(k, _)| k < end);
        runs.push(start..start + len);
        start += len;
    }
    (keys, runs)
}

/// The layer and block of a key of [`by_block`].
pub(crate) fn block_of_key(key: u64, block_size: impl Fn(u32) -> u32) -> (u32, u64) {
    let (seeds, idx) = unpack(key);
    (seeds, idx / u64::from(block_size(seeds)))
}

/// The layers of one rule set in one database folder.
pub struct Database {
    /// The values (the marker files) and their distances (the companions). A layer without
    /// its distances is incomplete: a principal variation that needs them stops with
    /// [`ProbeError::DistancesMissing`]; a layer built without them has a distances file
    /// that keeps no entries.
    set: LayerSet,
    cache: BlockCache,
    /// Layers held uncompressed in memory ([`Database::load`]).
    loaded: loaded::Loaded,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let present: Vec<u32> = (0..=MAX_SEEDS).filter(|&n| self.has_layer(n)).collect();
        f.debug_struct("Database")
            .field("dir", &self.dir())
            .field("rules", &self.rules())
            .field("layers", &present)
            .finish_non_exhaustive()
    }
}

impl Database {
    /// Opens every layer file present for `rules` under `dir` (checking each header). Missing
    /// layers are reported when a probe needs them. Blocks are read with positioned reads,
    /// so a file changed after this call gives errors, never a crash.
    ///
    /// # Errors
    ///
    /// A layer file present but unreadable, damaged, not a regular file, or of another
    /// rule set or layer ([`StoreError`]).
    pub fn open(dir: impl AsRef<Path>, rules: Rules) -> Result<Database, StoreError> {
        Self::open_with(dir.as_ref(), rules, Access::Read)
    }

    /// As [`Database::open`], but memory-maps the files, which saves a copy per cold block
    /// read (docs/measurements.md has the figures).
    ///
    /// # Safety
    ///
    /// The caller promises that no layer file under `dir` is truncated or modified while
    /// the database is open: reading a mapped file that shrank kills the process with
    /// SIGBUS (see [`LayerFile::open_mapped`]). Files written by `awari build` are never
    /// changed in place.
    ///
    /// # Errors
    ///
    /// As [`Database::open`].
    pub unsafe fn open_mapped(dir: impl AsRef<Path>, rules: Rules) -> Result<Database, StoreError> {
        Self::open_with(dir.as_ref(), rules, Access::Mapped)
    }

    fn open_with(dir: &Path, rules: Rules, access: Access) -> Result<Database, StoreError> {
        Ok(Database {
            set: LayerSet::open(dir, rules, Tables::Values, access)?,
            cache: BlockCache::new(CACHE_BYTES),
            loaded: loaded::Loaded::new(),
        })
    }

    /// The rule set.
    pub fn rules(&self) -> Rules {
        self.set.rules()
    }
    /// The database folder (the rule set's files are in its subfolder).
    pub fn dir(&self) -> &Path {
        self.set.db()
    }

    /// The largest `n` such that layers `0..=n` are all present.
    pub fn complete_up_to(&self) -> Option<u32> {
        self.set.complete_up_to()
    }

    /// The distances file of a present layer `seeds`, if it has one keeping an entry for
    /// each position (not for a layer built without its distances, see
    /// [`Database::distances_kept`]).
    pub fn distances_file(&self, seeds: u32) -> Option<&LayerFile> {
        self.distances_of(seeds).filter(|f| f.keeps_entries())
    }

    /// The distances file of a present layer, whatever it keeps.
    fn distances_of(&self, seeds: u32) -> Option<&LayerFile> {
        self.set.layer(seeds)?.companion.as_ref()
    }

    /// Whether layer `seeds` keeps its distances: false for a layer built without them
    /// (its distances file keeps no entries), through which a principal variation steers
    /// best moves by a bounded search; true for a layer with a full distances file, or
    /// none at all (an incomplete layer, see [`ProbeError::DistancesMissing`]).
    pub fn distances_kept(&self, seeds: u32) -> bool {
        self.distances_of(seeds).is_none_or(|f| f.keeps_entries())
    }

    /// The file of layer `seeds`, if present.
    pub fn layer(&self, seeds: u32) -> Option<&LayerFile> {
        self.set.layer(seeds).map(|l| &l.marker)
    }

    fn layer_or_missing(&self, seeds: u32) -> Result<&LayerFile, ProbeError> {
        self.set.layer_or_missing(seeds).map(|l| &l.marker)
    }

    /// The stored value of `board`: the seed difference the side to move achieves from now
    /// on with perfect play.
    ///
    /// # Errors
    ///
    /// The board's layer is missing, or its file cannot be read or is damaged.
    pub fn value(&self, board: &Board) -> Result<i8, ProbeError> {
        let layer = self.layer_or_missing(board.seeds())?;
        let stored = self.cached_byte(layer, board)? as i8;
        if layer.dont_cares() {
            return self.restored(board, stored);
        }
        Ok(stored)
    }

    /// The stored round of `board` (see [`crate::store::TableKind::Distances`]), if its
    /// layer has a distances file; [`DISTANCE_SATURATED`](crate::store::DISTANCE_SATURATED),
    /// the round that says nothing, where the layer was built without its distances.
    pub(crate) fn distance(&self, board: &Board) -> Result<Option<u8>, ProbeError> {
        match self.distances_of(board.seeds()) {
            Some(file) if !file.keeps_entries() => Ok(Some(store::DISTANCE_SATURATED)),
            Some(file) => Ok(Some(self.cached_byte(file, board)?)),
            None => Ok(None),
        }
    }

    /// The byte of `board` in `file`, through the block cache.
    fn cached_byte(&self, file: &LayerFile, board: &Board) -> Result<u8, StoreError> {
        self.cache.byte(file, board)
    }

    /// Whether layer `seeds` is built.
    pub fn has_layer(&self, seeds: u32) -> bool {
        self.layer(seeds).is_some()
    }

    /// The values of many boards at once. Lookups are grouped by block, so each block is
    /// read and decompressed once per call (in parallel) instead of once per board: the
    /// fast path for batches of random positions, where a block cache rarely hits. The
    /// boards of layers held in memory ([`Database::load`]) are read there, in place.
    ///
    /// # Errors
    ///
    /// As [`Database::value`], for the first board that fails.
    pub fn values_many(&self, boards: &[Board]) -> Result<Vec<i8>, ProbeError> {
        // The first board whose layer is missing is the error, as one by one.
        if let Some(b) = boards.iter().find(|b| !self.has_layer(b.seeds())) {
            self.layer_or_missing(b.seeds())?;
        }
        // What is held now, for the whole batch (another thread may load or unload).
        let held = self.loaded.read().clone();
        self.resolve(&held, boards)
    }

    /// The values of `boards` as stored (don't-cares and all, see [`LayerFile::dont_cares`])
    /// except in the layers `held` in memory, every layer present.
    fn stored_many(
        &self,
        held: &dont_cares::Held,
        boards: &[Board],
    ) -> Result<Vec<i8>, ProbeError> {
        let in_memory = |b: &Board| held[b.seeds() as usize].as_ref();
        if !boards.iter().any(|b| in_memory(b).is_some()) {
            return Ok(self.values_by_block(boards)?);
        }
        let mut out: Vec<i8> = boards
            .par_iter()
            .map(|b| in_memory(b).map_or(0, |l| l[index::rank(b) as usize]))
            .collect();
        let (rest_at, rest): (Vec<usize>, Vec<Board>) = boards
            .iter()
            .enumerate()
            .filter(|(_, b)| in_memory(b).is_none())
            .map(|(at, b)| (at, *b))
            .unzip();
        for (at, v) in rest_at.into_iter().zip(self.values_by_block(&rest)?) {
            out[at] = v;
        }
        Ok(out)
    }

    /// The values of `boards` as stored, every layer present, grouped by block (see
    /// [`Database::values_many`]).
    fn values_by_block(&self, boards: &[Board]) -> Result<Vec<i8>, StoreError> {
        let block_size = |seeds| self.layer(seeds).expect("checked above").block_size();
        let (keys, runs) = by_block(boards, block_size);
        // Each run's values in the order of its keys: a byte a lookup until they are put
        // in place.
        let answers: Vec<Vec<i8>> = runs
            .par_iter()
            .map(|run| {
                let group = &keys[run.clone()];
                let (seeds, block) = block_of_key(group[0].0, block_size);
                let layer = self.layer(seeds).expect("checked above");
                let values = layer.stored_block_bytes(block)?;
                let base = block * u64::from(layer.block_size());
                Ok(group
                    .iter()
                    .map(|&(key, _)| values[(unpack(key).1 - base) as usize] as i8)
                    .collect())
            })
            .collect::<Result<_, StoreError>>()?;
        let mut out = vec![0i8; boards.len()];
        for (run, values) in runs.iter().zip(answers) {
            for (&(_, at), v) in keys[run.clone()].iter().zip(values) {
                out[at] = v;
            }
        }
        Ok(out)
    }

    /// Forgets every cached block (the next probes read their blocks from the files).
    pub fn clear_cache(&self) {
        self.cache.clear();
    }

    /// Every legal move with its value, in pit order (empty when the game is over).
    ///
    /// # Errors
    ///
    /// As [`Database::value`], for a child's layer.
    pub fn moves_with_values(&self, board: &Board) -> Result<Vec<MoveValue>, ProbeError> {
        let mut out = Vec::new();
        for m in &self.rules().legal_moves(board) {
            let child = self.value(&m.child)?;
            out.push(MoveValue {
                pit: m.pit,
                captured: m.captured,
                child: m.child,
                value: m.captured as i8 - child,
            });
        }
        Ok(out)
    }

    /// The moves of highest value (empty when the game is over).
    ///
    /// # Errors
    ///
    /// As [`Database::moves_with_values`].
    pub fn best_moves(&self, board: &Board) -> Result<Vec<MoveValue>, ProbeError> {
        let moves = self.moves_with_values(board)?;
        let best = moves.iter().map(|m| m.value).max();
        Ok(moves
            .into_iter()
            .filter(|m| Some(m.value) == best)
            .collect())
    }

    /// The outcome of a game in progress, given the seeds each side has captured so far.
    ///
    /// # Errors
    ///
    /// As [`Database::value`].
    pub fn outcome(
        &self,
        board: &Board,
        mover_captured: u32,
        opponent_captured: u32,
    ) -> Result<Outcome, ProbeError> {
        Ok(outcome(
            self.value(board)?,
            board.seeds(),
            mover_captured,
            opponent_captured,
        ))
    }
}
