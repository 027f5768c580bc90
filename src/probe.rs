//! Answering questions from the databases: values, moves with their values, best moves,
//! principal variations and game outcomes.
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

use crate::board::{Board, MAX_SEEDS};
use crate::index;
use crate::rules::{Rules, Turn};
use crate::store::{self, LayerFile, StoreError, TableKind, DISTANCE_SATURATED};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Why a probe failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The layer of the board is not in the database.
    #[error("layer {seeds} ({seeds} seeds on the board) of rules '{rules}' is not built in {}", dir.display())]
    LayerMissing {
        /// The layer.
        seeds: u32,
        /// The rule set.
        rules: Rules,
        /// The database folder.
        dir: PathBuf,
    },
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

/// How a principal variation stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PvEnd {
    /// The game is over in the final position.
    GameOver {
        /// The mover's end value there.
        value: i8,
    },
    /// The final position already occurred: perfect play goes round for ever.
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

const CACHE_BLOCKS: usize = 256;

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

/// The fallback for positions whose stored round is saturated: the last local search's
/// answer, reused while the line stays inside the region it covered. The searches of one
/// line share one budget, and are given up for good once it is spent, so a line never
/// spends more than a fraction of a second searching.
#[derive(Default)]
struct LocalSearch {
    found: Option<HashMap<Board, u32>>,
    over_budget: bool,
    /// Positions explored by this line's searches so far.
    spent: usize,
}

impl LocalSearch {
    fn distances(
        &mut self,
        db: &Database,
        here: &Board,
    ) -> Result<Option<&HashMap<Board, u32>>, ProbeError> {
        if self.over_budget {
            return Ok(None);
        }
        if !self.found.as_ref().is_some_and(|d| d.contains_key(here)) {
            let budget = PV_SEARCH_BUDGET.saturating_sub(self.spent);
            self.found = db.distances_out_of_layer(here, budget)?;
            self.spent += self.found.as_ref().map_or(budget, HashMap::len);
            self.over_budget = self.found.is_none();
        }
        Ok(self.found.as_ref())
    }
}
/// Positions a principal variation may explore in all to find distances within a layer.
/// Each costs up to seven lookups, a block read each when the cache misses: 4,096 keep
/// the worst case under a second by estimate (some 28,000 cold blocks at about 20 µs; not
/// measured: the rounds measured stay far below saturation), where a budget of 2^18
/// per search let a line search for minutes.
const PV_SEARCH_BUDGET: usize = 1 << 12;
/// Distance of a position from which the line never leaves the layer.
const UNREACHED: u32 = u32::MAX;

/// A cached block: its table kind, layer and number.
type BlockKey = (TableKind, u32, u64);

/// Recently read blocks, evicted oldest first.
#[derive(Default)]
struct BlockCache {
    blocks: HashMap<BlockKey, Arc<Vec<u8>>>,
    order: VecDeque<BlockKey>,
}

/// The layers of one rule set in one database folder.
pub struct Database {
    dir: PathBuf,
    rules: Rules,
    layers: Vec<Option<LayerFile>>,
    /// The distances of each layer, where present (a layer without them is incomplete: a
    /// principal variation that needs them stops with [`ProbeError::DistancesMissing`]).
    distances: Vec<Option<LayerFile>>,
    cache: Mutex<BlockCache>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let present: Vec<u32> = (0..=MAX_SEEDS).filter(|&n| self.has_layer(n)).collect();
        f.debug_struct("Database")
            .field("dir", &self.dir)
            .field("rules", &self.rules)
            .field("layers", &present)
            .finish_non_exhaustive()
    }
}

/// How a database reads its files.
#[derive(Clone, Copy)]
enum Access {
    Read,
    Mapped,
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
        store::check_folder(&store::rules_dir(dir, rules))?;
        let open = |seeds, kind| -> Result<Option<LayerFile>, StoreError> {
            let path = store::table_path(dir, rules, seeds, kind);
            // `symlink_metadata` does not open the file, so a FIFO cannot block here;
            // `LayerFile` refuses anything that is not a regular file.
            if std::fs::symlink_metadata(&path).is_err() {
                return Ok(None);
            }
            Ok(Some(match access {
                Access::Read => LayerFile::open_kind(&path, rules, seeds, kind)?,
                // SAFETY: the caller of `open_mapped` promised the files do not change.
                Access::Mapped => unsafe { LayerFile::open_mapped(&path, rules, seeds, kind)? },
            }))
        };
        let mut layers = Vec::new();
        let mut distances = Vec::new();
        for seeds in 0..=MAX_SEEDS {
            layers.push(open(seeds, TableKind::Values)?);
            distances.push(open(seeds, TableKind::Distances)?);
        }
        Ok(Database {
            dir: dir.to_path_buf(),
            rules,
            layers,
            distances,
            cache: Mutex::new(BlockCache::default()),
        })
    }

    /// The rule set.
    pub fn rules(&self) -> Rules {
        self.rules
    }
    /// The database folder (the rule set's files are in its subfolder).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The largest `n` such that layers `0..=n` are all present.
    pub fn complete_up_to(&self) -> Option<u32> {
        let present = self.layers.iter().take_while(|l| l.is_some()).count();
        (present > 0).then(|| present as u32 - 1)
    }

    /// The distances file of layer `seeds`, if present.
    pub fn distances_file(&self, seeds: u32) -> Option<&LayerFile> {
        self.distances.get(seeds as usize).and_then(|l| l.as_ref())
    }

    /// The file of layer `seeds`, if present.
    pub fn layer(&self, seeds: u32) -> Option<&LayerFile> {
        self.layers.get(seeds as usize).and_then(|l| l.as_ref())
    }

    fn layer_or_missing(&self, seeds: u32) -> Result<&LayerFile, ProbeError> {
        self.layer(seeds).ok_or_else(|| ProbeError::LayerMissing {
            seeds,
            rules: self.rules,
            dir: self.dir.clone(),
        })
    }

    /// The stored value of `board`: the seed difference the side to move achieves from now
    /// on with perfect play.
    ///
    /// # Errors
    ///
    /// The board's layer is missing, or its file cannot be read or is damaged.
    pub fn value(&self, board: &Board) -> Result<i8, ProbeError> {
        let layer = self.layer_or_missing(board.seeds())?;
        Ok(self.cached_byte(layer, board)? as i8)
    }

    /// The stored round of `board` (see [`TableKind::Distances`]), if its layer has a
    /// distances file.
    pub(crate) fn distance(&self, board: &Board) -> Result<Option<u8>, ProbeError> {
        match self.distances.get(board.seeds() as usize) {
            Some(Some(file)) => Ok(Some(self.cached_byte(file, board)?)),
            _ => Ok(None),
        }
    }

    /// The byte of `board` in `file`, through the block cache.
    fn cached_byte(&self, file: &LayerFile, board: &Board) -> Result<u8, StoreError> {
        let idx = index::rank(board);
        let block = idx / u64::from(file.block_size());
        let within = (idx % u64::from(file.block_size())) as usize;
        let key = (file.kind(), file.seeds(), block);
        if let Some(bytes) = self.cache_get(key) {
            return Ok(bytes[within]);
        }
        let bytes = Arc::new(file.read_block_bytes(block)?);
        let b = bytes[within];
        self.cache_put(key, bytes);
        Ok(b)
    }

    /// Whether layer `seeds` is built.
    pub fn has_layer(&self, seeds: u32) -> bool {
        self.layer(seeds).is_some()
    }

    /// The values of many boards at once. Lookups are grouped by block, so each block is
    /// read and decompressed once per call (in parallel) instead of once per board: the
    /// fast path for batches of random positions, where a block cache rarely hits.
    ///
    /// # Errors
    ///
    /// As [`Database::value`], for the first board that fails.
    pub fn values_many(&self, boards: &[Board]) -> Result<Vec<i8>, ProbeError> {
        // The first board whose layer is missing is the error, as one by one.
        if let Some(b) = boards.iter().find(|b| !self.has_layer(b.seeds())) {
            self.layer_or_missing(b.seeds())?;
        }
        // (layer and index packed, where the answer goes), sorted so a block's lookups are
        // adjacent: 16 bytes an entry, ranked and sorted in parallel (with 24-byte tuples
        // ranked on one thread, these were a fifth of a million random boards' time).
        let mut keys: Vec<(u64, usize)> = boards
            .par_iter()
            .enumerate()
            .map(|(at, b)| (pack(b.seeds(), index::rank(b)), at))
            .collect();
        keys.par_sort_unstable_by_key(|&(key, _)| key);
        let block_of = |&(key, _): &(u64, usize)| {
            let (seeds, idx) = unpack(key);
            let layer = self.layer(seeds).expect("checked above");
            (seeds, idx / u64::from(layer.block_size()))
        };
        let mut groups: Vec<&[(u64, usize)]> = Vec::new();
        let mut rest = &keys[..];
        while let Some(first) = rest.first() {
            let key = block_of(first);
            let len = rest.iter().take_while(|k| block_of(k) == key).count();
            groups.push(&rest[..len]);
            rest = &rest[len..];
        }
        let answers: Vec<Vec<(usize, i8)>> = groups
            .par_iter()
            .map(|group| {
                let (seeds, block) = block_of(&group[0]);
                let layer = self.layer(seeds).expect("checked above");
                let values = layer.read_block(block)?;
                let base = block * u64::from(layer.block_size());
                Ok(group
                    .iter()
                    .map(|&(key, at)| (at, values[(unpack(key).1 - base) as usize]))
                    .collect())
            })
            .collect::<Result<_, StoreError>>()?;
        let mut out = vec![0i8; boards.len()];
        for (at, v) in answers.into_iter().flatten() {
            out[at] = v;
        }
        Ok(out)
    }

    /// Forgets every cached block (the next probes read their blocks from the files).
    pub fn clear_cache(&self) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.blocks.clear();
        cache.order.clear();
    }

    fn cache_get(&self, key: BlockKey) -> Option<Arc<Vec<u8>>> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.blocks.get(&key).cloned()
    }

    fn cache_put(&self, key: BlockKey, values: Arc<Vec<u8>>) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.blocks.insert(key, values).is_none() {
            cache.order.push_back(key);
        }
        while cache.order.len() > CACHE_BLOCKS {
            if let Some(old) = cache.order.pop_front() {
                cache.blocks.remove(&old);
            }
        }
    }

    /// Every legal move with its value, in pit order (empty when the game is over).
    ///
    /// # Errors
    ///
    /// As [`Database::value`], for a child's layer.
    pub fn moves_with_values(&self, board: &Board) -> Result<Vec<MoveValue>, ProbeError> {
        let mut out = Vec::new();
        for m in &self.rules.legal_moves(board) {
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

    /// The move perfect play makes from `board`: a move of the best value that also makes
    /// progress (in a won position it heads for the capture that realises the value rather
    /// than going round; in a lost one it delays as long as it can), chosen as the steps of
    /// [`Database::principal_variation`] are. `None` when the game is over.
    ///
    /// # Errors
    ///
    /// A layer the answer needs is missing or damaged, or has no distances file
    /// ([`ProbeError::DistancesMissing`]).
    pub fn perfect_move(&self, board: &Board) -> Result<Option<MoveValue>, ProbeError> {
        let mut search = LocalSearch::default();
        Ok(self
            .choose(board, &HashSet::new(), &mut search)?
            .map(|(_, m)| m))
    }

    /// Perfect play from `board` until the game ends, a position repeats, or `max_plies`
    /// moves. Every move has the best value; among equal moves, a won position takes the
    /// one that leaves the layer soonest by the stored distances (a capture first, then the
    /// child settled in the lowest round) and a lost one the latest, lowest pit first among
    /// equals. Since the rounds fall at every such move, a line whose value is not 0 always
    /// reaches a capture or the end of the game. Where a stored round is saturated
    /// ([`crate::store::DISTANCE_SATURATED`]) the line falls back on a small bounded local
    /// search (a retrograde search over the region best play can reach); past its budget,
    /// each side plays a best move preferring a capture, then a new position, then the
    /// lowest pit, and the line may then go round ([`PvEnd::Repetition`] with a non-zero
    /// value).
    ///
    /// # Errors
    ///
    /// A layer the line needs is missing or damaged, or has no distances file when the
    /// line needs one ([`ProbeError::DistancesMissing`]: searching instead could take
    /// minutes).
    pub fn principal_variation(
        &self,
        board: &Board,
        max_plies: usize,
    ) -> Result<PrincipalVariation, ProbeError> {
        let mut steps = Vec::new();
        let mut seen = HashSet::new();
        let mut here = *board;
        let mut search = LocalSearch::default();
        loop {
            if let Turn::GameOver { value } = self.rules.turn(&here) {
                return Ok(PrincipalVariation {
                    steps,
                    last: here,
                    end: PvEnd::GameOver { value },
                });
            }
            if !seen.insert(here) {
                return Ok(PrincipalVariation {
                    steps,
                    last: here,
                    end: PvEnd::Repetition,
                });
            }
            if steps.len() >= max_plies {
                return Ok(PrincipalVariation {
                    steps,
                    last: here,
                    end: PvEnd::Limit,
                });
            }
            let (value, m) = self
                .choose(&here, &seen, &mut search)?
                .expect("a position whose game is not over has a legal move");
            steps.push(PvStep {
                board: here,
                value,
                pit: m.pit,
                captured: m.captured,
            });
            here = m.child;
        }
    }

    /// The value of `here` and the move perfect play makes there (`None` when the game is
    /// over); `seen` holds the positions of the line so far.
    fn choose(
        &self,
        here: &Board,
        seen: &HashSet<Board>,
        search: &mut LocalSearch,
    ) -> Result<Option<(i8, MoveValue)>, ProbeError> {
        let value = self.value(here)?;
        let best = self.best_moves(here)?;
        if best.is_empty() {
            return Ok(None);
        }
        let by_distance = if value == 0 {
            None
        } else {
            self.progress_move(here, value, &best, search)?
        };
        // Without distances (a draw, or a search over budget) prefer a capture, then a move
        // to a position not seen yet, then the lowest pit.
        let m = by_distance.unwrap_or_else(|| {
            *best
                .iter()
                .find(|m| m.captured > 0)
                .or_else(|| best.iter().find(|m| !seen.contains(&m.child)))
                .unwrap_or(&best[0])
        });
        Ok(Some((value, m)))
    }

    /// Among the best moves of a position of value `value ≠ 0`, the one that makes
    /// progress: the winner leaves the layer as soon as it can, the loser as late as it
    /// can. `None` if the distances cannot tell.
    fn progress_move(
        &self,
        here: &Board,
        value: i8,
        best: &[MoveValue],
        search: &mut LocalSearch,
    ) -> Result<Option<MoveValue>, ProbeError> {
        // Plies until the layer is left, after the move: a capture leaves it at once.
        let mut after: Vec<(u32, MoveValue)> = Vec::with_capacity(best.len());
        match self.distance(here)? {
            Some(d) if d != DISTANCE_SATURATED => {
                for m in best {
                    let d = if m.captured > 0 {
                        0
                    } else {
                        let child = self.distance(&m.child)?.expect("same layer as `here`");
                        u32::from(child) + 1
                    };
                    after.push((d, *m));
                }
            }
            // No distances file: the layer is incomplete. A search over a large layer can
            // take minutes, so the line stops and says how to complete the layer.
            None => {
                let seeds = here.seeds();
                return Err(ProbeError::DistancesMissing {
                    seeds,
                    rules: self.rules,
                    path: store::table_path(&self.dir, self.rules, seeds, TableKind::Distances),
                    dir: self.dir.clone(),
                });
            }
            Some(_) => {
                let Some(d) = search.distances(self, here)? else {
                    return Ok(None);
                };
                for m in best {
                    let x = if m.captured > 0 {
                        Some(0)
                    } else {
                        d.get(&m.child).copied().filter(|&x| x != UNREACHED)
                    };
                    if let Some(x) = x {
                        after.push((x, *m));
                    }
                }
            }
        }
        Ok(if value > 0 {
            after.into_iter().min_by_key(|&(d, m)| (d, m.pit))
        } else {
            after
                .into_iter()
                .max_by_key(|&(d, m)| (d, std::cmp::Reverse(m.pit)))
        }
        .map(|(_, m)| m))
    }

    /// Plies until play leaves the layer of `start` (a capture or the end of the game) when
    /// both sides play only best moves, the side with the positive value hurrying and the
    /// other delaying: the distances the value-only tables lack, worked out by a local
    /// retrograde search over the positions reachable that way. `None` if that region holds
    /// more than `budget` positions.
    fn distances_out_of_layer(
        &self,
        start: &Board,
        budget: usize,
    ) -> Result<Option<HashMap<Board, u32>>, ProbeError> {
        struct Node {
            board: Board,
            hurries: bool,
            exits: bool,
            children: Vec<usize>,
        }
        let mut ids: HashMap<Board, usize> = HashMap::from([(*start, 0)]);
        let mut nodes: Vec<Node> = Vec::new();
        let mut queue = VecDeque::from([*start]);
        while let Some(b) = queue.pop_front() {
            let value = self.value(&b)?;
            let mut node = Node {
                board: b,
                hurries: value > 0,
                exits: false,
                children: Vec::new(),
            };
            if let Turn::GameOver { .. } = self.rules.turn(&b) {
                node.exits = true;
            } else {
                for m in self.best_moves(&b)? {
                    if m.captured > 0 {
                        node.exits = true;
                        continue;
                    }
                    let next = ids.len();
                    let id = *ids.entry(m.child).or_insert_with(|| {
                        queue.push_back(m.child);
                        next
                    });
                    if ids.len() > budget {
                        return Ok(None);
                    }
                    node.children.push(id);
                }
            }
            nodes.push(node);
        }
        // Nodes were numbered in the order they were queued, so nodes[i] has id i.
        let mut dist = vec![UNREACHED; nodes.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for i in 0..nodes.len() {
                let node = &nodes[i];
                let kids = node.children.iter().map(|&c| dist[c]);
                let exit = node.exits.then_some(0u32);
                let best = if node.hurries {
                    kids.chain(exit).min()
                } else if node.children.iter().any(|&c| dist[c] == UNREACHED) {
                    Some(UNREACHED)
                } else {
                    kids.chain(exit).max()
                };
                let d = match best {
                    Some(UNREACHED) | None => UNREACHED,
                    Some(x) => x + 1,
                };
                if d < dist[i] {
                    dist[i] = d;
                    changed = true;
                }
            }
        }
        Ok(Some(
            nodes.iter().zip(dist).map(|(n, d)| (n.board, d)).collect(),
        ))
    }
}
