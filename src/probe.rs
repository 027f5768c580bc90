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
use crate::store::{self, LayerFile, StoreError};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Why a probe failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("layer {seeds} ({seeds} seeds on the board) of rules '{rules}' is not built in {}; run: awari build --rules {rules} --max-seeds {seeds} --db {}", dir.display(), dir.display())]
    LayerMissing {
        seeds: u32,
        rules: Rules,
        dir: PathBuf,
    },
    #[error("layer {seeds} ({seeds} seeds on the board) is beyond what this program can build (at most {max} seeds)", max = crate::solve::MAX_SOLVABLE_SEEDS)]
    LayerTooLarge { seeds: u32 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One legal move and what it is worth to the mover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// The mover's pit, 0..=5.
    pub pit: u8,
    pub captured: u8,
    /// The position after the move, from the opponent's side.
    pub child: Board,
    /// `captured − value(child)`: the seed difference the mover gets by playing it.
    pub value: i8,
}

/// Win, draw or loss, for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Win,
    Draw,
    Loss,
}

impl Verdict {
    pub fn of_difference(d: i32) -> Verdict {
        match d.signum() {
            1 => Verdict::Win,
            0 => Verdict::Draw,
            _ => Verdict::Loss,
        }
    }
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
    pub verdict: Verdict,
    /// Final score of the side to move (halves when endless play shares an odd count).
    pub mover_score: f64,
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
    pub captured: u8,
}

/// How a principal variation stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PvEnd {
    /// The game is over in the final position; the mover's end value.
    GameOver { value: i8 },
    /// The final position already occurred: perfect play goes round for ever.
    Repetition,
    /// The length limit was reached.
    Limit,
}

/// A principal variation: the moves, the final position (from its mover's side) and why it
/// stops there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrincipalVariation {
    pub steps: Vec<PvStep>,
    pub last: Board,
    pub end: PvEnd,
}

const CACHE_BLOCKS: usize = 256;
/// Positions a principal variation may explore to find distances within a layer.
const PV_SEARCH_BUDGET: usize = 1 << 18;
/// Distance of a position from which the line never leaves the layer.
const UNREACHED: u32 = u32::MAX;

/// Recently read blocks, evicted oldest first.
#[derive(Default)]
struct BlockCache {
    blocks: HashMap<(u32, u64), Arc<Vec<i8>>>,
    order: VecDeque<(u32, u64)>,
}

/// The layers of one rule set in one database folder.
pub struct Database {
    dir: PathBuf,
    rules: Rules,
    layers: Vec<Option<LayerFile>>,
    cache: Mutex<BlockCache>,
}

impl Database {
    /// Opens every layer file present for `rules` under `dir` (checking each header). Missing
    /// layers are reported when a probe needs them.
    pub fn open(dir: impl AsRef<Path>, rules: Rules) -> Result<Database, StoreError> {
        let dir = dir.as_ref().to_path_buf();
        let mut layers = Vec::new();
        for seeds in 0..=MAX_SEEDS {
            let path = store::layer_path(&dir, rules, seeds);
            layers.push(if path.exists() {
                Some(LayerFile::open(&path, rules, seeds)?)
            } else {
                None
            });
        }
        Ok(Database {
            dir,
            rules,
            layers,
            cache: Mutex::new(BlockCache::default()),
        })
    }

    pub fn rules(&self) -> Rules {
        self.rules
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The largest `n` such that layers `0..=n` are all present.
    pub fn complete_up_to(&self) -> Option<u32> {
        let present = self.layers.iter().take_while(|l| l.is_some()).count();
        (present > 0).then(|| present as u32 - 1)
    }

    /// The file of layer `seeds`, if present.
    pub fn layer(&self, seeds: u32) -> Option<&LayerFile> {
        self.layers.get(seeds as usize).and_then(|l| l.as_ref())
    }

    fn layer_or_missing(&self, seeds: u32) -> Result<&LayerFile, ProbeError> {
        if self.layer(seeds).is_none() && seeds > crate::solve::MAX_SOLVABLE_SEEDS {
            return Err(ProbeError::LayerTooLarge { seeds });
        }
        self.layer(seeds).ok_or_else(|| ProbeError::LayerMissing {
            seeds,
            rules: self.rules,
            dir: self.dir.clone(),
        })
    }

    /// The stored value of `board`: the seed difference the side to move achieves from now
    /// on with perfect play.
    pub fn value(&self, board: &Board) -> Result<i8, ProbeError> {
        let seeds = board.seeds();
        let layer = self.layer_or_missing(seeds)?;
        let idx = index::rank(board);
        let block = idx / u64::from(layer.block_size());
        let within = (idx % u64::from(layer.block_size())) as usize;
        let key = (seeds, block);
        if let Some(values) = self.cache_get(key) {
            return Ok(values[within]);
        }
        let values = Arc::new(layer.read_block(block)?);
        let v = values[within];
        self.cache_put(key, values);
        Ok(v)
    }

    /// Whether layer `seeds` is built.
    pub fn has_layer(&self, seeds: u32) -> bool {
        self.layer(seeds).is_some()
    }

    /// The values of many boards at once. Lookups are grouped by block, so each block is
    /// read and decompressed once per call (in parallel) instead of once per board: the
    /// fast path for batches of random positions, where a block cache rarely hits.
    pub fn values_many(&self, boards: &[Board]) -> Result<Vec<i8>, ProbeError> {
        // (layer, index, where the answer goes), sorted so a block's lookups are adjacent.
        let mut keys: Vec<(u32, u64, usize)> = Vec::with_capacity(boards.len());
        for (at, b) in boards.iter().enumerate() {
            let seeds = b.seeds();
            self.layer_or_missing(seeds)?;
            keys.push((seeds, index::rank(b), at));
        }
        keys.par_sort_unstable();
        let block_of = |&(seeds, idx, _): &(u32, u64, usize)| {
            let layer = self.layer(seeds).expect("checked above");
            (seeds, idx / u64::from(layer.block_size()))
        };
        let mut groups: Vec<&[(u32, u64, usize)]> = Vec::new();
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
                    .map(|&(_, idx, at)| (at, values[(idx - base) as usize]))
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

    fn cache_get(&self, key: (u32, u64)) -> Option<Arc<Vec<i8>>> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.blocks.get(&key).cloned()
    }

    fn cache_put(&self, key: (u32, u64), values: Arc<Vec<i8>>) {
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
    pub fn best_moves(&self, board: &Board) -> Result<Vec<MoveValue>, ProbeError> {
        let moves = self.moves_with_values(board)?;
        let best = moves.iter().map(|m| m.value).max();
        Ok(moves
            .into_iter()
            .filter(|m| Some(m.value) == best)
            .collect())
    }

    /// The outcome of a game in progress, given the seeds each side has captured so far.
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
    /// than going round; in a lost one it delays as long as it can). The same choice as the
    /// first step of [`Database::principal_variation`]. `None` when the game is over.
    ///
    /// # Errors
    ///
    /// A layer the answer needs is missing or damaged.
    pub fn perfect_move(&self, board: &Board) -> Result<Option<MoveValue>, ProbeError> {
        let pv = self.principal_variation(board, 1)?;
        Ok(pv.steps.first().map(|step| {
            let m = self
                .rules
                .legal_moves(board)
                .iter()
                .find(|m| m.pit == step.pit)
                .copied()
                .expect("the variation plays a legal move");
            MoveValue {
                pit: m.pit,
                captured: m.captured,
                child: m.child,
                value: step.value,
            }
        }))
    }

    /// Perfect play from `board` until the game ends, a position repeats, or `max_plies`
    /// moves. The tables hold values, not distances, and in a won position not every best
    /// move makes progress; so when the value is not 0 the line is steered by a local
    /// search ([`Database::distances_out_of_layer`]): the winner leaves the layer (by a
    /// capture) as fast as it can, the loser as late as it can. If that search would exceed
    /// its budget, each side plays a best move preferring a capture, then a new position,
    /// then the lowest pit, and the line may then go round ([`PvEnd::Repetition`] with a
    /// non-zero value).
    pub fn principal_variation(
        &self,
        board: &Board,
        max_plies: usize,
    ) -> Result<PrincipalVariation, ProbeError> {
        let mut steps = Vec::new();
        let mut seen = HashSet::new();
        let mut here = *board;
        let mut distances: Option<HashMap<Board, u32>> = None;
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
            let value = self.value(&here)?;
            let best = self.best_moves(&here)?;
            if value != 0 && !distances.as_ref().is_some_and(|d| d.contains_key(&here)) {
                distances = self.distances_out_of_layer(&here)?;
            }
            let by_distance = distances.as_ref().and_then(|d| {
                // Captures leave the layer: distance 0 after the move.
                let after = |m: &MoveValue| {
                    if m.captured > 0 {
                        Some(0)
                    } else {
                        d.get(&m.child).copied().filter(|&x| x != UNREACHED)
                    }
                };
                if value > 0 {
                    best.iter()
                        .filter_map(|m| Some((after(m)?, m)))
                        .min_by_key(|&(x, m)| (x, m.pit))
                } else {
                    best.iter()
                        .filter_map(|m| Some((after(m)?, m)))
                        .max_by_key(|&(x, m)| (x, std::cmp::Reverse(m.pit)))
                }
            });
            // Without distances (a draw, or a search over budget) prefer a capture, then a
            // move to a position not seen yet, then the lowest pit.
            let m = match by_distance {
                Some((_, m)) => *m,
                None => *best
                    .iter()
                    .find(|m| m.captured > 0)
                    .or_else(|| best.iter().find(|m| !seen.contains(&m.child)))
                    .unwrap_or(&best[0]),
            };
            steps.push(PvStep {
                board: here,
                value,
                pit: m.pit,
                captured: m.captured,
            });
            here = m.child;
        }
    }

    /// Plies until play leaves the layer of `start` (a capture or the end of the game) when
    /// both sides play only best moves, the side with the positive value hurrying and the
    /// other delaying: the distances the value-only tables lack, worked out by a local
    /// retrograde search over the positions reachable that way. `None` if that region holds
    /// more than [`PV_SEARCH_BUDGET`] positions.
    fn distances_out_of_layer(
        &self,
        start: &Board,
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
                    if ids.len() > PV_SEARCH_BUDGET {
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
