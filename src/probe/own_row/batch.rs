//! The own-row values of many boards read from the tables alone, with no search: what
//! `awari probe --batch --cycles own-row-…` and Python's `OwnRowDatabase.values` answer.
//!
//! A board is taken with an empty history (the opening, or just after a capture), the
//! history the tables are built for, so its interval is its stored pair. A capture's
//! interval is `captured − [high, low]` of its child's stored pair, since a capture empties
//! the history. A quiet move's is not: its child is reached with the board in its history,
//! and its stored pair holds for the child with an empty history, not for the game where a
//! return to the board ends it. A quiet move's interval here is what the probe's search
//! knows of that child before it expands a node: its stored pair widened by the board's
//! own-row difference (the game from the child is the fresh game until it stops at the
//! board), and for each threshold the memoryless test (the board cannot end the game early
//! where the bounds' strategy never lets the game reach it). Where those decide nothing,
//! the interval stays wide: a search would be needed, and none is made.

use super::{raise_the_only_reaching, OwnRowAnswer, OwnRowMove, OwnRowTables};
use crate::board::{to_bits, Board};
use crate::probe::{block_of_key, by_block, unpack, BoundsDatabase, ProbeError};
use crate::rules::{MoveList, Turn};
use crate::solve::own_row::proof_search::{InLayer, Leaves, Search, Tree, Tri};
use crate::solve::own_row::{search_history, Proof};
use crate::store::{LayerFile, StoreError};
use rayon::prelude::*;

/// What one board's answer reads: its moves, and where its lookups start in the grouped
/// passes.
struct Line {
    moves: Option<MoveList>,
    /// Its stored pair, then each child's, in pit order.
    fresh_at: usize,
    /// Its memoryless pair, then each quiet child's (that is not a finished game).
    memoryless_at: usize,
}

impl<'a> OwnRowTables<'a> {
    /// The files a board's interval with an empty history is read from: its own-row layer,
    /// else its bounds (which hold whatever the history).
    fn fresh_files(&self, seeds: u32) -> Option<(&'a LayerFile, &'a LayerFile)> {
        self.layer(seeds).or_else(|| self.db.layer(seeds))
    }

    /// Whether boards of layer `seeds` have an interval with an empty history to read: their
    /// own-row layer, or else their bounds.
    pub fn has_intervals(&self, seeds: u32) -> bool {
        self.fresh_files(seeds).is_some()
    }

    /// The missing-layer error of the first board with neither its own-row layer nor its
    /// bounds, as the one-at-a-time probe names it (the bounds' layer).
    fn check_fresh_layers(
        &self,
        boards: impl IntoIterator<Item = Board>,
    ) -> Result<(), ProbeError> {
        for b in boards {
            if self.fresh_files(b.seeds()).is_none() {
                self.db.layer_or_missing(b.seeds())?;
            }
        }
        Ok(())
    }

    /// The intervals of many boards for their movers, each with an empty history (the
    /// opening, or just after a capture): the pairs `(low, high)` the own-row tables hold
    /// (exact when they meet), or the bounds where a layer's own-row values are not built.
    /// No search: this is what [`OwnRowTables::value`] starts from with an empty history,
    /// and what it proves can only be narrower. Lookups are grouped by block, as
    /// [`crate::Database::values_many`] does.
    ///
    /// # Errors
    ///
    /// A board with neither its own-row layer nor its bounds (the bounds' layer is named,
    /// as by the one-at-a-time probe), or a file that cannot be read or is damaged.
    pub fn intervals(&self, boards: &[Board]) -> Result<Vec<(i8, i8)>, ProbeError> {
        self.check_fresh_layers(boards.iter().copied())?;
        Ok(pairs_many(self.db, boards, |seeds| {
            self.fresh_files(seeds)
        })?)
    }

    /// The answers of many boards, each with an empty history, from the tables alone (no
    /// search; see the module's comment): the value is the board's stored interval
    /// ([`OwnRowTables::intervals`]), a capture's interval comes from its child's stored
    /// pair, a quiet move's from its child's stored pair widened by the board and the
    /// memoryless test (often wide where a search would prove more), and no move's high is
    /// above the value's.
    /// [`OwnRowAnswer::best_moves`] then gives, when the value is exact, the moves proved
    /// to keep it (none when the tables alone prove none), else those with the largest
    /// proved low. The value's `nodes` are 0. Every board and child is looked up in one
    /// grouped pass; the answers are assembled in parallel.
    ///
    /// # Errors
    ///
    /// As [`OwnRowTables::intervals`], for a board or a child.
    pub fn table_answers(&self, boards: &[Board]) -> Result<Vec<OwnRowAnswer>, ProbeError> {
        let rules = self.rules();
        let mut lines = Vec::with_capacity(boards.len());
        let mut fresh_wanted: Vec<Board> = Vec::new();
        let mut memoryless_wanted: Vec<Board> = Vec::new();
        for board in boards {
            let moves = match rules.turn(board) {
                Turn::GameOver { .. } => None,
                Turn::Moves(list) => Some(list),
            };
            lines.push(Line {
                moves,
                fresh_at: fresh_wanted.len(),
                memoryless_at: memoryless_wanted.len(),
            });
            fresh_wanted.push(*board);
            let Some(list) = moves else { continue };
            fresh_wanted.extend(list.iter().map(|m| m.child));
            if list.iter().any(|m| quiet_search(rules, m)) {
                memoryless_wanted.push(*board);
                memoryless_wanted.extend(
                    list.iter()
                        .filter(|m| quiet_search(rules, m))
                        .map(|m| m.child),
                );
            }
        }
        self.check_fresh_layers(fresh_wanted.iter().copied())?;
        let fresh = pairs_many(self.db, &fresh_wanted, |seeds| self.fresh_files(seeds))?;
        // The memoryless pairs are the bounds; without them, a pair that never lets the
        // memoryless test ignore a position (as the probe's leaves have it).
        let db = self.db;
        let with_bounds: Vec<Board> = memoryless_wanted
            .iter()
            .filter(|b| db.layer(b.seeds()).is_some())
            .copied()
            .collect();
        let mut bounds = pairs_many(db, &with_bounds, |seeds| db.layer(seeds))?.into_iter();
        let memoryless: Vec<(i8, i8)> = memoryless_wanted
            .iter()
            .map(|b| match db.layer(b.seeds()) {
                Some(_) => bounds.next().expect("one pair a board with bounds"),
                None => (-(b.seeds() as i8), b.seeds() as i8),
            })
            .collect();
        boards
            .par_iter()
            .zip(&lines)
            .map_init(Tree::default, |tree, (board, line)| {
                answer(self, tree, board, line, &fresh, &memoryless)
            })
            .collect()
    }
}

/// Whether a move's interval needs the quiet move's tests: no capture, and its child is
/// not a finished game (whose value the rules give).
fn quiet_search(rules: crate::rules::Rules, m: &crate::rules::Move) -> bool {
    m.captured == 0 && rules.game_over_bits(to_bits(&m.child)).is_none()
}

/// One board's answer from its looked-up pairs.
fn answer(
    tables: &OwnRowTables<'_>,
    tree: &mut Tree,
    board: &Board,
    line: &Line,
    fresh: &[(i8, i8)],
    memoryless: &[(i8, i8)],
) -> Result<OwnRowAnswer, ProbeError> {
    let rules = tables.rules();
    let (low, high) = fresh[line.fresh_at];
    let value = Proof {
        low,
        high,
        nodes: 0,
        stuck: false,
    };
    let Some(list) = line.moves else {
        return Ok(OwnRowAnswer {
            value,
            moves: Vec::new(),
        });
    };
    // The board and its quiet children, for the search's tests at the children's roots.
    let inner = |at: usize, m: usize| InLayer {
        fresh: fresh[at],
        memoryless: memoryless[m],
        fresh_from_here: false,
    };
    let mut leaves = Prefetched {
        known: [(0, UNKNOWN); 7],
        len: 0,
        tables,
    };
    let mut m_at = line.memoryless_at;
    for (k, m) in list.iter().enumerate() {
        if !quiet_search(rules, m) {
            continue;
        }
        if leaves.len == 0 {
            leaves.known[0] = (to_bits(board), inner(line.fresh_at, m_at));
            (leaves.len, m_at) = (1, m_at + 1);
        }
        let child = (to_bits(&m.child), inner(line.fresh_at + 1 + k, m_at));
        leaves.known[leaves.len] = child;
        (leaves.len, m_at) = (leaves.len + 1, m_at + 1);
    }
    let mut search = None;
    let mut moves = Vec::with_capacity(list.len());
    for (k, m) in list.iter().enumerate() {
        let c = m.captured as i8;
        let bits = to_bits(&m.child);
        let (low, high) = if m.captured > 0 {
            let (l, h) = fresh[line.fresh_at + 1 + k];
            (c - h, c - l)
        } else if let Some(v) = rules.game_over_bits(bits) {
            (-v, -v)
        } else {
            // One search a board: its path is the board, whichever child it tests.
            if search.is_none() {
                let history = search_history(std::slice::from_ref(board));
                search = Some(
                    Search::new(rules, tables.repetition, board.seeds(), &leaves, 0)
                        .with_history(&history)?,
                );
            }
            let s = search.as_mut().expect("made above");
            let (l, h) = child_interval(s, tree, bits, board.seeds())?;
            (-h, -l)
        };
        moves.push(OwnRowMove {
            pit: m.pit,
            captured: m.captured,
            child: m.child,
            ends_by_repetition: false,
            low,
            high: high.min(value.high),
        });
    }
    raise_the_only_reaching(&mut moves, value.low);
    Ok(OwnRowAnswer { value, moves })
}

/// The interval of a quiet child (packed, `seeds` seeds) for its mover, after the board
/// (the search's history): its widened interval, narrowed at every threshold of the seeds'
/// parity inside it by the tests the search makes of a position before expanding it.
/// Each test's answer holds on its own, so all of them together do. The search's budget is
/// 0: no node is expanded.
fn child_interval(
    search: &mut Search<'_, Prefetched<'_, '_>>,
    tree: &mut Tree,
    bits: u128,
    seeds: u32,
) -> Result<(i8, i8), ProbeError> {
    let (mut low, mut high) = search.root_interval(bits)?;
    // Every outcome has the parity of the seeds (see `proof_search::narrow`).
    let odd = |v: i32| (v - seeds as i32).rem_euclid(2) == 1;
    low += i32::from(odd(low));
    high -= i32::from(odd(high));
    let (first, last) = (low, high);
    for d in (first + 2..=last).step_by(2) {
        match search.at_least(tree, bits, d)? {
            Tri::Yes => low = low.max(d),
            Tri::No => high = high.min(d - 2),
            Tri::Unknown => {}
        }
    }
    Ok((low as i8, high as i8))
}

/// The search's leaves for one board's quiet children: the board and those children
/// already looked up; anything else from the tables (which the tests at a child's root
/// never ask for).
struct Prefetched<'a, 'b> {
    /// The first `len` are known: the board, then its quiet children.
    known: [(u128, InLayer); 7],
    len: usize,
    tables: &'b OwnRowTables<'a>,
}

/// What fills the slots of [`Prefetched::known`] past its `len`.
const UNKNOWN: InLayer = InLayer {
    fresh: (0, 0),
    memoryless: (0, 0),
    fresh_from_here: false,
};

impl Prefetched<'_, '_> {
    fn get(&self, bits: u128) -> Option<InLayer> {
        self.known[..self.len]
            .iter()
            .find(|k| k.0 == bits)
            .map(|k| k.1)
    }
}

impl Leaves for Prefetched<'_, '_> {
    type Error = ProbeError;
    fn fresh(&self, bits: u128, seeds: u32) -> Result<(i8, i8), ProbeError> {
        match self.get(bits) {
            Some(k) => Ok(k.fresh),
            None => self.tables.fresh(bits, seeds),
        }
    }
    fn in_layer(&self, bits: u128, seeds: u32) -> Result<InLayer, ProbeError> {
        match self.get(bits) {
            Some(k) => Ok(k),
            None => self.tables.in_layer(bits, seeds),
        }
    }
}

/// Boards up to which [`pairs_many`] reads through the database's block cache, one by one
/// (a single probe's board and children), rather than grouped by block.
const FEW: usize = 64;

/// The pairs of many boards from the pair files `files` gives for a layer (every board's
/// layer must have them): grouped by block, each block of each file read and decompressed
/// once (once for both where the two files' blocks are the same), the blocks in parallel;
/// a few boards through `db`'s block cache.
fn pairs_many<'f>(
    db: &BoundsDatabase,
    boards: &[Board],
    files: impl Fn(u32) -> Option<(&'f LayerFile, &'f LayerFile)> + Sync,
) -> Result<Vec<(i8, i8)>, StoreError> {
    let files_of = |seeds| files(seeds).expect("the caller checked every layer");
    if boards.len() <= FEW {
        return boards
            .iter()
            .map(|b| {
                let (low, high) = files_of(b.seeds());
                let (l, h) = db.cache().pair(low, high, b)?;
                Ok((l as i8, h as i8))
            })
            .collect();
    }
    let block_size = |seeds| files_of(seeds).1.block_size();
    let (keys, runs) = by_block(boards, block_size);
    let answers: Vec<Vec<(usize, (i8, i8))>> = runs
        .par_iter()
        .map(|run| {
            let group = &keys[run.clone()];
            let (seeds, block) = block_of_key(group[0].0, block_size);
            let (low, high) = files_of(seeds);
            if low.block_size() != high.block_size() {
                // Files written apart (a pair's files are written with one block size):
                // each position's low read from its own block.
                return group
                    .iter()
                    .map(|&(key, at)| {
                        let idx = unpack(key).1;
                        let size = u64::from(low.block_size());
                        let l = low.read_block_bytes(idx / size)?[(idx % size) as usize];
                        let size = u64::from(high.block_size());
                        let h = high.read_block_bytes(idx / size)?[(idx % size) as usize];
                        Ok((at, (l as i8, h as i8)))
                    })
                    .collect();
            }
            let low_bytes = low.read_block_bytes(block)?;
            let same = low.same_block(high, block)?;
            let high_bytes = if same {
                high.check_block_range(block, &low_bytes)?;
                None
            } else {
                Some(high.read_block_bytes(block)?)
            };
            let high_bytes = high_bytes.as_deref().unwrap_or(&low_bytes);
            let base = block * u64::from(high.block_size());
            Ok(group
                .iter()
                .map(|&(key, at)| {
                    let i = (unpack(key).1 - base) as usize;
                    (at, (low_bytes[i] as i8, high_bytes[i] as i8))
                })
                .collect())
        })
        .collect::<Result<_, StoreError>>()?;
    let mut out = vec![(0i8, 0i8); boards.len()];
    for (at, pair) in answers.into_iter().flatten() {
        out[at] = pair;
    }
    Ok(out)
}
